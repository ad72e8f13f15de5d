"""The statekeeper conformance scenario, Python edition (see clients/CONFORMANCE.md).

    python examples/conformance.py [--async] [--addr HOST:PORT] [--api-key KEY]

Environment: STATEKEEPER_ADDR, STATEKEEPER_API_KEY, STATEKEEPER_REQUIRE (comma
separated services, or "all", whose UNIMPLEMENTED answer fails the step
instead of skipping it). Exits 1 if a step failed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from statekeeper_client import (
    AsyncClient,
    Client,
    RetryPolicy,
    ServiceNotImplementedError,
    TlsOptions,
)
from statekeeper_client.v1 import (
    blackboard_pb2,
    checkpoint_pb2,
    common_pb2,
    memory_pb2,
    message_pb2,
    session_pb2,
)

LANGUAGE = "python"


class StepFailedError(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise StepFailedError(message)


class Report:
    def __init__(self, name: str, required: set[str]) -> None:
        self.name = name
        self.required = required
        self.passed = self.failed = self.skipped = 0
        self.start = time.monotonic()

    def _outcome(
        self, step: str, service: str, error: BaseException | None, ms: float, note: str
    ) -> None:
        if error is None:
            self.passed += 1
            print(f"  [PASS] {step} ({ms:.0f} ms){' ' + note if note else ''}", flush=True)
        elif (
            isinstance(error, ServiceNotImplementedError)
            and service not in self.required
            and "all" not in self.required
        ):
            self.skipped += 1
            print(
                f"  [SKIP] {step}: {service} service answers UNIMPLEMENTED ({error.capability})",
                flush=True,
            )
        else:
            self.failed += 1
            print(f"  [FAIL] {step} ({ms:.0f} ms): {type(error).__name__}: {error}", flush=True)

    def run(self, step: str, service: str, body: Callable[[], str | None]) -> None:
        start = time.monotonic()
        try:
            note = body() or ""
            self._outcome(step, service, None, (time.monotonic() - start) * 1000, note)
        except Exception as error:
            self._outcome(step, service, error, (time.monotonic() - start) * 1000, "")

    async def arun(
        self, step: str, service: str, body: Callable[[], Awaitable[str | None]]
    ) -> None:
        start = time.monotonic()
        try:
            note = await body() or ""
            self._outcome(step, service, None, (time.monotonic() - start) * 1000, note)
        except Exception as error:
            self._outcome(step, service, error, (time.monotonic() - start) * 1000, "")

    def finish(self) -> bool:
        total = (time.monotonic() - self.start) * 1000
        print(
            f"conformance {self.name}: {self.passed} passed, {self.failed} failed, "
            f"{self.skipped} skipped ({total:.0f} ms)",
            flush=True,
        )
        return self.failed == 0


# ---- requests shared by both passes: the same scenario as every language ----


def conversation() -> list[session_pb2.SessionMessage]:
    return [
        session_pb2.SessionMessage(
            role=session_pb2.ROLE_USER, content="What is the weather in Paris?"
        ),
        session_pb2.SessionMessage(
            role=session_pb2.ROLE_ASSISTANT,
            tool_calls=[
                session_pb2.ToolCall(id="call-1", name="get_weather", arguments='{"city":"Paris"}')
            ],
        ),
        session_pb2.SessionMessage(
            role=session_pb2.ROLE_TOOL, tool_call_id="call-1", content='{"temp_c":21}'
        ),
        session_pb2.SessionMessage(
            role=session_pb2.ROLE_ASSISTANT, content="It is 21 degrees in Paris."
        ),
    ]


BUDGET, RESERVE = 4096, 256
STATE = b'{"step":1,"plan":["fetch","summarize"]}'


class Ids:
    def __init__(self, suffix: str) -> None:
        run = f"{LANGUAGE}-{suffix}-{secrets.token_hex(4)}"
        self.user = f"conf-user-{run}"
        self.agent = f"conf-agent-{run}"
        self.execution = f"conf-exec-{run}"
        self.board = f"conf-board-{run}"
        self.sender = f"conf-sender-{run}"
        self.receiver = f"conf-receiver-{run}"
        self.session = ""


def episodes_request(ids: Ids) -> memory_pb2.RecordEpisodesRequest:
    """One RecordEpisodes call: an episode, then the same interaction again."""
    teal = memory_pb2.RecordEpisodeRequest(
        user_id=ids.user,
        session_id=ids.session,
        user_message="My favourite colour is teal.",
        assistant_response="Noted: your favourite colour is teal.",
        importance=0.9,
    )
    return memory_pb2.RecordEpisodesRequest(episodes=[teal, teal])


def checked_batch(recorded: memory_pb2.RecordEpisodesResponse) -> str:
    """The id created by the first item; the second must name it as its duplicate."""
    check(len(recorded.results) == 2, f"{len(recorded.results)} results for 2 episodes")
    first, second = recorded.results
    created = memory_pb2.RECORD_EPISODE_STATUS_CREATED
    check(first.status == created, f"first item: status {first.status}")
    episode_id = first.result.episode.id
    check(episode_id != "", "no episode id")
    duplicate = memory_pb2.RECORD_EPISODE_STATUS_DUPLICATE
    check(second.status == duplicate, f"second item: status {second.status}")
    check(second.result.duplicate_of == episode_id, f"duplicate_of {second.result.duplicate_of}")
    return episode_id


#: Redeliver a nacked job at once (the scenario does not wait for backoff).
QUICK_REDELIVERY = RetryPolicy(initial_backoff=0.05, max_backoff=0.05, jitter=0)
JOBS = [b"job-0", b"job-1", b"job-2"]


def job_requests(ids: Ids) -> list[message_pb2.SendMessageRequest]:
    return [
        message_pb2.SendMessageRequest(
            from_agent=ids.sender,
            to_agent=f"{ids.receiver}-inbox",
            type="conformance.job",
            payload=common_pb2.Payload(content_type="text/plain", data=job),
        )
        for job in JOBS
    ]


class JobHandler:
    """Handles the jobs; the first delivery of job-1 fails (raises), so the
    consumer must nack it and handle its redelivery."""

    def __init__(self) -> None:
        self.handled: list[tuple[bytes, int]] = []

    def __call__(self, delivery: message_pb2.Delivery) -> None:
        self.handled.append((delivery.message.payload.data, delivery.delivery_count))
        if delivery.message.payload.data == b"job-1" and delivery.delivery_count == 1:
            raise RuntimeError("job-1 fails on its first delivery")

    def check(self, sent: list[str], acked: int, nacked: int) -> str:
        check(sorted(set(j for j, _ in self.handled)) == JOBS, f"handled {self.handled}")
        check((b"job-1", 2) in self.handled, f"job-1 not redelivered: {self.handled}")
        check(acked == 3 and nacked == 1, f"acked {acked}, nacked {nacked}")
        return f"messages={len(sent)} handled={len(self.handled)} acked={acked} nacked={nacked}"


def task_put(ids: Ids, key: str) -> blackboard_pb2.PutEntryRequest:
    value = blackboard_pb2.BlackboardValue()
    value.json.update({"task": key})
    return blackboard_pb2.PutEntryRequest(board=f"{ids.board}-resume", key=key, value=value)


def sync_pass(addr: str, api_key: str, required: set[str]) -> bool:
    report = Report(LANGUAGE, required)
    ids = Ids("sync")
    client = Client(addr, api_key=api_key, timeout=10, tls=TlsOptions.from_env())

    def connect() -> str:
        client.wait_ready(timeout=10)
        return f"addr={addr}"

    def health() -> str:
        status = client.health()
        check(status == "SERVING", f"health status {status}")
        return status

    def create_session() -> str:
        created = client.sessions.CreateSession(
            session_pb2.CreateSessionRequest(
                session=session_pb2.Session(user_id=ids.user, agent_id=ids.agent)
            )
        )
        check(created.session.session_id != "", "no session_id")
        check(created.session.version == 1, f"version {created.session.version}")
        ids.session = created.session.session_id
        return f"session_id={ids.session}"

    def append_messages() -> str:
        check(ids.session != "", "no session (create_session failed)")
        appended = client.sessions.AppendMessages(
            session_pb2.AppendMessagesRequest(session_id=ids.session, messages=conversation())
        )
        check(len(appended.messages) == 4, f"{len(appended.messages)} messages appended")
        check(
            appended.session.message_count == 4, f"message_count {appended.session.message_count}"
        )
        return f"version={appended.session.version}"

    def context_window() -> str:
        check(ids.session != "", "no session (create_session failed)")
        window = client.sessions.GetContextWindow(
            session_pb2.GetContextWindowRequest(
                session_id=ids.session,
                token_budget=BUDGET,
                reserved_output_tokens=RESERVE,
                system_prompt="You are a conformance test agent.",
            )
        )
        total = window.accounting.total_tokens
        check(
            total <= BUDGET - RESERVE, f"total_tokens {total} > budget {BUDGET} - reserve {RESERVE}"
        )
        check(len(window.messages) == 4, f"{len(window.messages)} messages in window")
        return f"total_tokens={total} messages={len(window.messages)}"

    def episode() -> str:
        recorded = client.memory.RecordEpisodes(episodes_request(ids))
        episode_id = checked_batch(recorded)
        recalled = client.memory.Recall(
            memory_pb2.RecallRequest(user_id=ids.user, query_text="favourite colour", top_k=5)
        )
        found = [r.episode.id for r in recalled.results]
        check(episode_id in found, f"episode {episode_id} not recalled (got {found})")
        return f"episode_id={episode_id}"

    def checkpoint() -> str:
        saved = client.checkpoints.SaveCheckpoint(
            checkpoint_pb2.SaveCheckpointRequest(
                checkpoint=checkpoint_pb2.Checkpoint(
                    execution_id=ids.execution,
                    step=1,
                    step_name="plan",
                    state=common_pb2.Payload(
                        content_type="application/json", schema_version=1, data=STATE
                    ),
                )
            )
        )
        check(saved.checkpoint_id != "", "no checkpoint_id")
        got = client.checkpoints.GetCheckpoint(
            checkpoint_pb2.GetCheckpointRequest(execution_id=ids.execution)
        )
        check(
            got.checkpoint.checkpoint_id == saved.checkpoint_id,
            f"latest is {got.checkpoint.checkpoint_id}, saved {saved.checkpoint_id}",
        )
        check(got.checkpoint.state.data == STATE, "state differs")
        return f"checkpoint_id={saved.checkpoint_id}"

    def blackboard() -> str:
        with client.watch(ids.board, prefix="plan/", timeout=10) as watch:
            responses = watch.responses()
            first = next(responses)
            check(
                first.WhichOneof("kind") == "started",
                f"first response is {first.WhichOneof('kind')}",
            )
            value = blackboard_pb2.BlackboardValue()
            value.json.update({"status": "done"})
            put = client.blackboard.PutEntry(
                blackboard_pb2.PutEntryRequest(
                    board=ids.board, key="plan/step-3", value=value, writer_agent_id=ids.agent
                )
            )
            revision = put.header.revision
            for response in responses:
                for event in response.events.events:
                    if event.entry.key == "plan/step-3":
                        check(
                            event.type == blackboard_pb2.BLACKBOARD_EVENT_TYPE_PUT,
                            f"event type {event.type}",
                        )
                        check(
                            event.revision == revision,
                            f"event revision {event.revision} != put {revision}",
                        )
                        return f"revision={revision} resume_revision={watch.resume_revision}"
        raise StepFailedError("watch ended without the event")

    def messages() -> str:
        sent = client.messages.SendMessage(
            message_pb2.SendMessageRequest(
                from_agent=ids.sender,
                to_agent=ids.receiver,
                type="conformance.ping",
                payload=common_pb2.Payload(content_type="text/plain", data=b"ping"),
            )
        )
        check(sent.message_id != "", "no message_id")
        pulled = client.messages.PullMessages(
            message_pb2.PullMessagesRequest(
                agent_id=ids.receiver, max_messages=1, wait_timeout=_duration(5)
            )
        )
        check(len(pulled.deliveries) == 1, f"{len(pulled.deliveries)} deliveries")
        delivery = pulled.deliveries[0]
        check(delivery.message.message_id == sent.message_id, "another message delivered")
        check(delivery.message.payload.data == b"ping", "payload differs")
        acked = client.messages.AckMessages(
            message_pb2.AckMessagesRequest(receipt_handles=[delivery.receipt_handle])
        )
        check(
            acked.results[0].status == message_pb2.RECEIPT_STATUS_OK,
            f"ack status {acked.results[0].status}",
        )
        return f"message_id={sent.message_id}"

    def watch_resume() -> str:
        board = f"{ids.board}-resume"
        with client.watch(board, prefix="task/", timeout=20) as first:
            responses = first.responses()
            started = next(responses)
            check(started.WhichOneof("kind") == "started", "no started response")
            puts = [client.blackboard.PutEntry(task_put(ids, f"task/{n}")) for n in (1, 2)]
            seen: list[int] = []
            for response in responses:
                seen.extend(event.revision for event in response.events.events)
                if len(seen) >= 2:
                    break
        check(seen == [p.header.revision for p in puts], f"events {seen}")
        resume_at = first.resume_revision
        check(resume_at > seen[-1], f"resume_revision {resume_at} <= {seen[-1]}")
        # Written while no watch is open; the resumed watch must start with it.
        third = client.blackboard.PutEntry(task_put(ids, "task/3"))
        with client.watch(board, prefix="task/", start_revision=resume_at, timeout=20) as again:
            event = next(iter(again))
        check(
            (event.entry.key, event.revision) == ("task/3", third.header.revision),
            f"resumed at {event.entry.key}@{event.revision}, want task/3@{third.header.revision}",
        )
        return f"resume_revision={resume_at} next={event.revision}"

    def inbox_consumer() -> str:
        sent = [client.messages.SendMessage(r).message_id for r in job_requests(ids)]
        handler = JobHandler()
        consumer = client.inbox(
            f"{ids.receiver}-inbox",
            handler,
            visibility_timeout=10,
            redelivery_backoff=QUICK_REDELIVERY,
        )
        stats = consumer.run(max_messages=4, timeout=20)
        return handler.check(sent, stats.acked, stats.nacked)

    print(f"conformance {LANGUAGE} (sync client) against {addr}", flush=True)
    try:
        report.run("connect", "connect", connect)
        if report.failed:
            return report.finish()
        report.run("health", "health", health)
        report.run("create_session", "session", create_session)
        report.run("append_messages", "session", append_messages)
        report.run("context_window", "session", context_window)
        report.run("episode_record_recall", "memory", episode)
        report.run("checkpoint_save_get", "checkpoint", checkpoint)
        report.run("blackboard_watch", "blackboard", blackboard)
        report.run("message_send_receive", "message", messages)
        report.run("watch_resume", "blackboard", watch_resume)
        report.run("inbox_consumer", "message", inbox_consumer)
    finally:
        client.close()
    return report.finish()


def _duration(seconds: float) -> Any:
    from google.protobuf.duration_pb2 import Duration

    d = Duration()
    d.FromMilliseconds(int(seconds * 1000))
    return d


async def async_pass(addr: str, api_key: str, required: set[str]) -> bool:
    """The same scenario through AsyncClient (grpc.aio)."""
    report = Report(f"{LANGUAGE}-async", required)
    ids = Ids("async")
    client = AsyncClient(addr, api_key=api_key, timeout=10, tls=TlsOptions.from_env())

    async def connect() -> str:
        await client.wait_ready(timeout=10)
        return f"addr={addr}"

    async def health() -> str:
        status = await client.health()
        check(status == "SERVING", f"health status {status}")
        return status

    async def create_session() -> str:
        created = await client.sessions.CreateSession(
            session_pb2.CreateSessionRequest(
                session=session_pb2.Session(user_id=ids.user, agent_id=ids.agent)
            )
        )
        ids.session = created.session.session_id
        check(ids.session != "", "no session_id")
        return f"session_id={ids.session}"

    async def append_messages() -> str:
        check(ids.session != "", "no session (create_session failed)")
        appended = await client.sessions.AppendMessages(
            session_pb2.AppendMessagesRequest(session_id=ids.session, messages=conversation())
        )
        check(
            appended.session.message_count == 4, f"message_count {appended.session.message_count}"
        )
        return f"version={appended.session.version}"

    async def context_window() -> str:
        check(ids.session != "", "no session (create_session failed)")
        window = await client.sessions.GetContextWindow(
            session_pb2.GetContextWindowRequest(
                session_id=ids.session,
                token_budget=BUDGET,
                reserved_output_tokens=RESERVE,
                system_prompt="You are a conformance test agent.",
            )
        )
        total = window.accounting.total_tokens
        check(total <= BUDGET - RESERVE, f"total_tokens {total} > budget")
        check(len(window.messages) == 4, f"{len(window.messages)} messages in window")
        return f"total_tokens={total}"

    async def episode() -> str:
        recorded = await client.memory.RecordEpisodes(episodes_request(ids))
        episode_id = checked_batch(recorded)
        recalled = await client.memory.Recall(
            memory_pb2.RecallRequest(user_id=ids.user, query_text="favourite colour", top_k=5)
        )
        check(episode_id in [r.episode.id for r in recalled.results], "episode not recalled")
        return f"episode_id={episode_id}"

    async def checkpoint() -> str:
        saved = await client.checkpoints.SaveCheckpoint(
            checkpoint_pb2.SaveCheckpointRequest(
                checkpoint=checkpoint_pb2.Checkpoint(
                    execution_id=ids.execution,
                    step=1,
                    step_name="plan",
                    state=common_pb2.Payload(
                        content_type="application/json", schema_version=1, data=STATE
                    ),
                )
            )
        )
        got = await client.checkpoints.GetCheckpoint(
            checkpoint_pb2.GetCheckpointRequest(execution_id=ids.execution)
        )
        check(got.checkpoint.checkpoint_id == saved.checkpoint_id, "latest checkpoint differs")
        check(got.checkpoint.state.data == STATE, "state differs")
        return f"checkpoint_id={saved.checkpoint_id}"

    async def blackboard() -> str:
        async with client.watch(ids.board, prefix="plan/", timeout=10) as watch:
            responses = watch.responses()
            first = await anext(responses)
            check(
                first.WhichOneof("kind") == "started",
                f"first response is {first.WhichOneof('kind')}",
            )
            value = blackboard_pb2.BlackboardValue()
            value.json.update({"status": "done"})
            put = await client.blackboard.PutEntry(
                blackboard_pb2.PutEntryRequest(board=ids.board, key="plan/step-3", value=value)
            )
            async for response in responses:
                for event in response.events.events:
                    if event.entry.key == "plan/step-3":
                        check(event.revision == put.header.revision, "event revision differs")
                        return f"revision={event.revision}"
        raise StepFailedError("watch ended without the event")

    async def messages() -> str:
        sent = await client.messages.SendMessage(
            message_pb2.SendMessageRequest(
                from_agent=ids.sender,
                to_agent=ids.receiver,
                type="conformance.ping",
                payload=common_pb2.Payload(content_type="text/plain", data=b"ping"),
            )
        )
        pulled = await client.messages.PullMessages(
            message_pb2.PullMessagesRequest(
                agent_id=ids.receiver, max_messages=1, wait_timeout=_duration(5)
            )
        )
        check(len(pulled.deliveries) == 1, f"{len(pulled.deliveries)} deliveries")
        check(
            pulled.deliveries[0].message.message_id == sent.message_id, "another message delivered"
        )
        acked = await client.messages.AckMessages(
            message_pb2.AckMessagesRequest(receipt_handles=[pulled.deliveries[0].receipt_handle])
        )
        check(acked.results[0].status == message_pb2.RECEIPT_STATUS_OK, "ack failed")
        return f"message_id={sent.message_id}"

    async def watch_resume() -> str:
        board = f"{ids.board}-resume"
        async with client.watch(board, prefix="task/", timeout=20) as first:
            responses = first.responses()
            started = await anext(responses)
            check(started.WhichOneof("kind") == "started", "no started response")
            puts = [await client.blackboard.PutEntry(task_put(ids, f"task/{n}")) for n in (1, 2)]
            seen: list[int] = []
            async for response in responses:
                seen.extend(event.revision for event in response.events.events)
                if len(seen) >= 2:
                    break
        check(seen == [p.header.revision for p in puts], f"events {seen}")
        resume_at = first.resume_revision
        third = await client.blackboard.PutEntry(task_put(ids, "task/3"))
        async with client.watch(
            board, prefix="task/", start_revision=resume_at, timeout=20
        ) as again:
            event = await anext(aiter(again))
        check(
            (event.entry.key, event.revision) == ("task/3", third.header.revision),
            f"resumed at {event.entry.key}@{event.revision}, want task/3@{third.header.revision}",
        )
        return f"resume_revision={resume_at} next={event.revision}"

    async def inbox_consumer() -> str:
        sent = [(await client.messages.SendMessage(r)).message_id for r in job_requests(ids)]
        handler = JobHandler()
        consumer = client.inbox(
            f"{ids.receiver}-inbox",
            handler,
            visibility_timeout=10,
            redelivery_backoff=QUICK_REDELIVERY,
        )
        stats = await consumer.run(max_messages=4, timeout=20)
        return handler.check(sent, stats.acked, stats.nacked)

    print(f"conformance {LANGUAGE} (async client) against {addr}", flush=True)
    try:
        await report.arun("connect", "connect", connect)
        if report.failed:
            return report.finish()
        await report.arun("health", "health", health)
        await report.arun("create_session", "session", create_session)
        await report.arun("append_messages", "session", append_messages)
        await report.arun("context_window", "session", context_window)
        await report.arun("episode_record_recall", "memory", episode)
        await report.arun("checkpoint_save_get", "checkpoint", checkpoint)
        await report.arun("blackboard_watch", "blackboard", blackboard)
        await report.arun("message_send_receive", "message", messages)
        await report.arun("watch_resume", "blackboard", watch_resume)
        await report.arun("inbox_consumer", "message", inbox_consumer)
    finally:
        await client.close()
    return report.finish()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addr", default=os.environ.get("STATEKEEPER_ADDR", "127.0.0.1:50051"))
    parser.add_argument("--api-key", default=os.environ.get("STATEKEEPER_API_KEY", ""))
    parser.add_argument("--mode", choices=["sync", "async", "both"], default="both")
    args = parser.parse_args()
    required = {
        s.strip() for s in os.environ.get("STATEKEEPER_REQUIRE", "").split(",") if s.strip()
    }
    ok = True
    if args.mode in ("sync", "both"):
        ok = sync_pass(args.addr, args.api_key, required) and ok
    if args.mode in ("async", "both"):
        ok = asyncio.run(async_pass(args.addr, args.api_key, required)) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
