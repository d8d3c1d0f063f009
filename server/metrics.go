package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/actionserver/actionserver/api"
)

// metricsPath serves the metrics in Prometheus' text format, behind the
// key unless Options.OpenMetrics.
const metricsPath = "/metrics"

// metrics are one server's: its own registry, so servers in one process
// (tests, benchmarks) never share counters and no package state changes.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	handler  http.Handler
	once     sync.Once // runtimeCollectors
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "action_server", Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "action_server", Subsystem: "http", Name: "request_duration_seconds",
			Help: "Time to answer an HTTP request, by route pattern and method; streams last as long as they are followed.",
			// From a probe (sub-millisecond) to a blocking command (the
			// host's default timeout is two minutes).
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 30, 120, 600},
		}, []string{"route", "method"}),
	}
	m.reg.MustRegister(m.requests, m.latency, &stateCollector{s: s})
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

// runtimeCollectors adds the Go runtime's and the process's metrics at the
// first scrape: building them costs a few hundred KiB that a server nobody
// scrapes, one of thousands on a node, need not hold.
func (m *metrics) runtimeCollectors() {
	m.once.Do(func() {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	})
}

// observe counts each request by its route pattern (gin's FullPath, never
// the raw path: ids would make a series each) and its status.
func (m *metrics) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	method := c.Request.Method
	if route == "" {
		// Unknown paths and methods are the caller's to choose: one
		// series for them all.
		route, method = "unmatched", "other"
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(c.Writer.Status())).Inc()
	m.latency.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
}

func (s *Server) serveMetrics(c *gin.Context) {
	s.metrics.runtimeCollectors()
	s.metrics.handler.ServeHTTP(c.Writer, c.Request)
}

// The states a plugin and an MCP server may be in: each is reported, 1 for
// the current one, so a query need not know which exist.
var (
	pluginStates = []api.PluginState{api.PluginStarting, api.PluginReady, api.PluginFailed, api.PluginDisabled, api.PluginRestarting}
	mcpStates    = []api.MCPServerState{api.MCPStarting, api.MCPRunning, api.MCPRestarting, api.MCPStopped}
)

var (
	descSessions = prometheus.NewDesc("action_server_sessions", "Shell sessions open, the default one included.", nil, nil)
	descStarted  = prometheus.NewDesc("action_server_commands_started_total", "Commands started in every session, piped ones included.", nil, nil)
	descRunning  = prometheus.NewDesc("action_server_commands_running", "Terminal commands running now.", nil, nil)
	descOutput   = prometheus.NewDesc("action_server_output_bytes_total", "Output printed by finished commands, kept or dropped.", nil, nil)
	descKept     = prometheus.NewDesc("action_server_output_kept_bytes", "Finished commands' output kept for re-reading (--output-budget bounds it).", nil, nil)
	descPlugin   = prometheus.NewDesc("action_server_plugin_state", "1 for a plugin's current state, 0 for the others.", []string{"plugin", "state"}, nil)
	descMCP      = prometheus.NewDesc("action_server_mcp_server_state", "1 for a stdio MCP server's current state, 0 for the others.", []string{"server", "state"}, nil)
	descChildren = prometheus.NewDesc("action_server_child_processes", "Direct child processes of the server (shells, plugins, MCP servers).", nil, nil)
	descReady    = prometheus.NewDesc("action_server_ready", "1 when /readyz answers 200.", nil, nil)
	descClaimed  = prometheus.NewDesc("action_server_claimed", "1 once the server has a session key (always, unless it was started for late binding).", nil, nil)
	descIdle     = prometheus.NewDesc("action_server_idle_seconds", "Time since the last action or claim, as /server_info's idle_time.", nil, nil)
	descFDs      = prometheus.NewDesc("action_server_open_fds", "File descriptors the server holds open.", nil, nil)
)

// stateCollector reads the executor's counts at each scrape, so nothing is
// counted twice and the executor keeps no metrics of its own.
type stateCollector struct{ s *Server }

func (sc *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSessions, descStarted, descRunning, descOutput, descKept,
		descPlugin, descMCP, descChildren, descReady, descClaimed, descIdle, descFDs} {
		ch <- d
	}
}

func (sc *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := sc.s
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	flag := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	rt := runtimeStats()
	gauge(descChildren, float64(rt.Children))
	gauge(descFDs, float64(rt.OpenFDs))
	e := s.exec.Load()
	_, claimed := s.keys.load()
	gauge(descClaimed, flag(claimed))
	gauge(descReady, flag(e != nil && !s.draining.Load()))
	if e == nil {
		if starting := s.starting.Load(); starting != nil {
			for _, p := range (*starting)() {
				for _, st := range pluginStates {
					gauge(descPlugin, flag(pluginStateNames[p.State] == st), p.Name, string(st))
				}
			}
		}
		return
	}
	st := e.Stats()
	gauge(descSessions, float64(st.Sessions))
	ch <- prometheus.MustNewConstMetric(descStarted, prometheus.CounterValue, float64(st.CommandsStarted))
	gauge(descRunning, float64(st.CommandsRunning))
	ch <- prometheus.MustNewConstMetric(descOutput, prometheus.CounterValue, float64(st.OutputBytes))
	gauge(descKept, float64(st.OutputKept))
	gauge(descIdle, e.IdleTime().Seconds())
	for _, p := range st.Plugins {
		for _, state := range pluginStates {
			gauge(descPlugin, flag(pluginStateNames[p.State] == state), p.Name, string(state))
		}
	}
	for _, m := range st.MCPServers {
		for _, state := range mcpStates {
			gauge(descMCP, flag(mcpStateNames[m.State] == state), m.Name, string(state))
		}
	}
}
