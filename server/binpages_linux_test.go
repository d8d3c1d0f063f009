package server

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binaryRSS sums the resident kilobytes of this executable's mappings,
// read-only and writable apart.
func binaryRSS(t *testing.T) (readOnly, writable int) {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	require.NoError(t, err)
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	mine, write := false, false
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && len(fields[1]) == 4 {
			mine = len(fields) >= 6 && fields[5] == exe
			write = strings.Contains(fields[1], "w")
			continue
		}
		if mine && len(fields) == 3 && fields[0] == "Rss:" {
			kb, err := strconv.Atoi(fields[1])
			require.NoError(t, err)
			if write {
				writable += kb
			} else {
				readOnly += kb
			}
		}
	}
	require.NoError(t, sc.Err())
	return readOnly, writable
}

func TestReleaseBinaryPages_DropsReadOnlyPagesOnly(t *testing.T) {
	roBefore, rwBefore := binaryRSS(t)
	require.Positive(t, roBefore)
	releaseBinaryPages()
	roAfter, rwAfter := binaryRSS(t)
	assert.Less(t, roAfter, roBefore, "code and constants are no longer all mapped")
	assert.GreaterOrEqual(t, rwAfter, rwBefore, "writable data is never dropped")
	// And the program runs on: what it uses is mapped again.
	assert.Equal(t, "42", strconv.Itoa(42))
}
