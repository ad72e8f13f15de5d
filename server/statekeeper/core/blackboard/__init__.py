"""blackboard."""
