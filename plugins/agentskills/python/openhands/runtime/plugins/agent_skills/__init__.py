"""Agent skills: helpers for agents working in the IPython kernel."""
