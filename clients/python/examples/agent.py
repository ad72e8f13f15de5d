"""A tiny example agent: it keeps its conversation in a statekeeper session,
asks for a context window that fits its model, answers (a canned echo instead
of a model call) and announces progress on the team blackboard.

    STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev python examples/agent.py
"""

from __future__ import annotations

import os

from statekeeper_client import Client, ServiceNotImplementedError
from statekeeper_client.v1 import blackboard_pb2, session_pb2


def main() -> None:
    addr = os.environ.get("STATEKEEPER_ADDR", "127.0.0.1:50051")
    with Client(addr, api_key=os.environ.get("STATEKEEPER_API_KEY"), timeout=10) as sk:
        session = sk.sessions.CreateSession(
            session_pb2.CreateSessionRequest(
                session=session_pb2.Session(user_id="alice", agent_id="example-agent-py")
            )
        ).session

        def say(role: session_pb2.Role, content: str) -> None:
            sk.sessions.AppendMessages(
                session_pb2.AppendMessagesRequest(
                    session_id=session.session_id,
                    messages=[session_pb2.SessionMessage(role=role, content=content)],
                )
            )

        for question in ["Hello!", "What can you remember?"]:
            say(session_pb2.ROLE_USER, question)
            window = sk.sessions.GetContextWindow(
                session_pb2.GetContextWindowRequest(
                    session_id=session.session_id,
                    token_budget=8192,
                    reserved_output_tokens=1024,
                    system_prompt="You are a helpful agent.",
                )
            )
            # A real agent sends window.messages to its model here.
            answer = (
                f"(echo) {question} [{len(window.messages)} messages, "
                f"{window.accounting.total_tokens} tokens in context]"
            )
            say(session_pb2.ROLE_ASSISTANT, answer)
            print("agent:", answer)

        value = blackboard_pb2.BlackboardValue()
        value.json.update({"session": session.session_id, "state": "done"})
        try:
            sk.blackboard.PutEntry(
                blackboard_pb2.PutEntryRequest(
                    board="team",
                    key="agents/example-agent-py",
                    writer_agent_id="example-agent-py",
                    value=value,
                )
            )
            print("announced on the blackboard")
        except ServiceNotImplementedError as error:
            print("blackboard not available on this server yet:", error.capability)


if __name__ == "__main__":
    main()
