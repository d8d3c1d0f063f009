"""Namespace for the action server's agent skills (import path kept from OpenHands)."""
