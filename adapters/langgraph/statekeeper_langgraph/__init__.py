"""LangGraph checkpointer backed by statekeeper's CheckpointService."""

from statekeeper_langgraph.saver import OwnershipLostError, StatekeeperSaver

__all__ = ["OwnershipLostError", "StatekeeperSaver"]
