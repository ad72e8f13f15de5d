"""The archive tier's fixtures: a real S3 endpoint on loopback (moto's
server mode, speaking the S3 protocol over HTTP) and helpers to look at
what an archive holds (the local directory, or the bucket through boto3)."""

from __future__ import annotations

import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.harness import processes
from tests.harness.deadlines import wait_until

ACCESS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


@dataclass
class S3Endpoint:
    url: str
    env: dict[str, str] = field(default_factory=dict)

    def client(self):  # type: ignore[no-untyped-def]
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id=ACCESS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=ACCESS["AWS_SECRET_ACCESS_KEY"],
        )

    def new_bucket(self) -> str:
        name = f"archive-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    """moto_server on a free loopback port for the whole session."""
    port = processes.free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    moto = processes.spawn(
        processes.python_module("moto.server", "-H", "127.0.0.1", "-p", str(port)), log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(url), 60, "moto_server answering", lambda: log.read_text())
        env = {**ACCESS, "AWS_ENDPOINT_URL": url, "AWS_REGION": "us-east-1"}
        yield S3Endpoint(url, env)
    finally:
        processes.terminate(moto, 10)


@dataclass
class ArchiveView:
    """The keys of an archive, local directory or bucket."""

    directory: Path | None = None
    endpoint: S3Endpoint | None = None
    bucket: str = ""
    prefix: str = ""

    def all_keys(self) -> list[str]:
        if self.directory is not None:
            if not self.directory.exists():
                return []
            return sorted(
                str(path.relative_to(self.directory))
                for path in self.directory.rglob("*")
                if path.is_file()
            )
        assert self.endpoint is not None
        client = self.endpoint.client()
        keys: list[str] = []
        token: dict[str, str] = {}
        for _ in range(10_000):  # bounded: pages of 1,000
            page = client.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix + "/", **token)
            keys += [item["Key"][len(self.prefix) + 1 :] for item in page.get("Contents", [])]
            if not page.get("IsTruncated"):
                break
            token = {"ContinuationToken": page["NextContinuationToken"]}
        return sorted(keys)

    def read(self, key: str) -> bytes:
        if self.directory is not None:
            return (self.directory / key).read_bytes()
        assert self.endpoint is not None
        body = self.endpoint.client().get_object(Bucket=self.bucket, Key=f"{self.prefix}/{key}")
        return bytes(body["Body"].read())
