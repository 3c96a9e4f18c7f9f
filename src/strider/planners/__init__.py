"""Planners: one module per strategy, each exposing ``STRATEGY`` (see strider.strategy)."""
