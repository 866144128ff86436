"""The conversion cache's own bounds, its S3 store, the janitor's reach and its settings."""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.support.aws import Aws
from workflows.cli.executions import cache_line
from workflows.conversion import cache_stores
from workflows.conversion.cache import CacheBounds, prune
from workflows.conversion.cache_stores import LocalStore, S3Store
from workflows.errors import SpecInvalid
from workflows.janitor.cleanup import find_and_remove
from workflows.settings import Settings

REGION = "us-east-1"
BUCKET = "cache-bucket"


def small_entry(store: Any, key: str, size: int, tmp_path: Path) -> None:
    folder = tmp_path / f"artifact-{key}"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"x" * size)
    store.put(key, folder, {"key": key})


def test_the_cache_keeps_its_own_size_and_age_bounds(tmp_path: Path) -> None:
    # Given four entries of 1000 bytes: one unused for 40 days, the others used 3, 2 and 1 hours ago
    store = LocalStore(tmp_path / "store")
    now = time.time()
    for key, age_s in (("old", 40 * 86400), ("a", 3 * 3600), ("b", 2 * 3600), ("c", 3600)):
        small_entry(store, key, 1000, tmp_path)
        marker = store.root / key / "inputs.json"
        os.utime(marker, (now - age_s, now - age_s))
    # When pruned to 30 days and 2500 bytes, keeping the entry just used ("a")
    removed = prune(store, CacheBounds(max_bytes=2500, max_age_s=30 * 86400), keep="a", now=now)
    # Then the expired entry goes, and the least recently used of the rest until two fit
    assert sorted(removed) == ["b", "old"]
    assert sorted(e.key for e in store.entries()) == ["a", "c"]


@pytest.fixture
def aws_bucket() -> str:
    return BUCKET


@pytest.fixture
def s3(aws: Aws) -> Any:
    return aws.s3


def test_the_s3_store_serves_complete_entries_only(s3: Any, tmp_path: Path) -> None:
    # Given an S3 store with one complete entry, and one whose upload stopped before inputs.json
    store = S3Store(s3, f"s3://{BUCKET}/conversions")
    small_entry(store, "complete", 10, tmp_path)
    s3.put_object(Bucket=BUCKET, Key="conversions/partial/artifact/model.onnx", Body=b"half")
    # When each is fetched
    found = store.fetch("complete", tmp_path / "served")
    missing = store.fetch("partial", tmp_path / "half")
    # Then the complete one is served file for file; the partial one is no entry
    assert found and (tmp_path / "served" / "model.onnx").read_bytes() == b"x" * 10
    assert not missing and not (tmp_path / "half").exists()
    assert [e.key for e in store.entries()] == ["complete"]
    # And the size bound applies in S3 too
    small_entry(store, "newer", 10, tmp_path)
    assert prune(store, CacheBounds(max_bytes=15, max_age_s=86400), keep="newer") == ["complete"]
    assert [e.key for e in store.entries()] == ["newer"]


def test_an_s3_claim_waits_for_a_live_conversion_and_ignores_a_stale_one(
    s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given another run converting key "k" (its marker is fresh), which stores the entry a moment later
    monkeypatch.setattr(cache_stores, "CLAIM_POLL_S", 0.05)
    store = S3Store(s3, f"s3://{BUCKET}/conversions")
    s3.put_object(Bucket=BUCKET, Key="conversions/k/.converting", Body=b"now")
    finisher = threading.Timer(0.5, small_entry, args=(store, "k", 10, tmp_path))
    finisher.start()
    # When this run claims the key, Then it waits until the entry exists, holding no marker of its own
    started = time.monotonic()
    with store.claim("k"):
        assert store.fetch("k", tmp_path / "served")
    finisher.join()
    assert time.monotonic() - started >= 0.4
    # Given a marker older than any convert Lambda can live, When claimed, Then it is not waited for,
    # this run holds the marker while it converts and removes it afterwards
    s3.put_object(Bucket=BUCKET, Key="conversions/old/.converting", Body=b"then")
    monkeypatch.setattr(cache_stores, "CLAIM_STALE_S", -1.0)
    with store.claim("old"):
        assert s3.head_object(Bucket=BUCKET, Key="conversions/old/.converting")["ContentLength"] > 4
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET, Prefix="conversions/old/")


def test_the_janitor_ttl_does_not_reach_cached_artifacts(s3: Any, tmp_path: Path) -> None:
    # Given a stale run's staging folder and a conversion cache entry, both written now
    sagemaker = boto3.client("sagemaker", region_name=REGION)
    s3.put_object(Bucket=BUCKET, Key="staging/old-run/model.onnx", Body=b"x")
    small_entry(S3Store(s3, f"s3://{BUCKET}/conversions"), "k", 10, tmp_path)
    # When the janitor runs a week later
    report = find_and_remove(
        sagemaker=sagemaker, s3=s3, bucket=BUCKET, now=datetime.now(UTC) + timedelta(days=7)
    )
    # Then the staging folder is removed and the cache entry is kept
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert [leak.name for leak in report.leaks] == [f"s3://{BUCKET}/staging/old-run/"]
    assert keys == {"conversions/k/artifact/model.onnx", "conversions/k/inputs.json"}


def test_the_cache_location_and_bounds_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the handler environment with a cache and its bounds
    monkeypatch.setenv("DEPLOYBENCH_BUCKET", "b")
    monkeypatch.setenv("DEPLOYBENCH_SAGEMAKER_ROLE_ARN", "arn:aws:iam::1:role/r")
    monkeypatch.setenv("DEPLOYBENCH_CONVERSION_CACHE", "s3://b/conversions/")
    monkeypatch.setenv("DEPLOYBENCH_CONVERSION_CACHE_MAX_GIB", "2.5")
    monkeypatch.setenv("DEPLOYBENCH_CONVERSION_CACHE_MAX_AGE_DAYS", "7")
    settings = Settings.from_env()
    assert (settings.conversion_cache, settings.conversion_cache_max_gib) == ("s3://b/conversions/", 2.5)
    assert CacheBounds.from_settings(settings) == CacheBounds(
        max_bytes=int(2.5 * (1 << 30)), max_age_s=7 * 86400
    )
    # When the cache is switched off, Then there is none
    monkeypatch.setenv("DEPLOYBENCH_CONVERSION_CACHE", "off")
    assert Settings.from_env().conversion_cache is None
    # When a bound is not a positive number, Then the error names the variable, the value and the fix
    monkeypatch.setenv("DEPLOYBENCH_CONVERSION_CACHE_MAX_GIB", "lots")
    with pytest.raises(SpecInvalid) as caught:
        Settings.from_env()
    assert "DEPLOYBENCH_CONVERSION_CACHE_MAX_GIB='lots' is not a positive number" in str(caught.value)
    assert "set DEPLOYBENCH_CONVERSION_CACHE_MAX_GIB to a number above 0" in str(caught.value)


def test_the_run_summary_says_what_the_cache_did() -> None:
    hit = {"seconds": 0.8, "cache": {"status": "hit", "key": "ab" * 32, "location": "/c/abab"}}
    line = cache_line(hit)
    assert line is not None and line.startswith(
        "conversion cache hit, artifact reused in 0.8 s (key abababababab"
    )
    # And a further device's artifact (pools across CPU and GPU types) says what its own entry did
    both = {
        **hit,
        "device_artifacts": [
            {"device": "cpu", "cache": {"status": "miss", "key": "cd" * 32, "location": "/c/cdcd"}}
        ],
    }
    assert (cache_line(both) or "").endswith("; cpu artifact: miss (key cdcdcdcdcdcd)")
    assert cache_line({"seconds": 20.0, "cache": {"status": "off", "key": None, "location": None}}) is None
    assert cache_line(None) is None


def dead_pid() -> int:
    """The id of a process that has exited (reaped, so nothing runs under it now)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def test_a_killed_stores_half_written_entry_is_reaped_by_the_next_store_never_served(tmp_path: Path) -> None:
    # Given a store where a killed run left `.k1.partial-<its pid>`, and a live run is writing its own
    store = LocalStore(tmp_path / "store")
    killed = store.root / f".k1.partial-{dead_pid()}" / "artifact"
    killed.mkdir(parents=True)
    (killed / "model.onnx").write_bytes(b"half")
    writing = store.root / f".k2.partial-{os.getpid()}"
    writing.mkdir()
    # Then it is no entry and cannot be fetched
    assert store.entries() == [] and not store.fetch("k1", tmp_path / "out")
    # When the next run stores an entry
    small_entry(store, "k3", 10, tmp_path)
    # Then the dead run's folder is gone, the live one's is left, and the new entry is served
    assert not killed.parent.exists() and writing.exists()
    assert [e.key for e in store.entries()] == ["k3"]


def test_janitor_local_removes_a_killed_runs_half_written_cache_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from typer.testing import CliRunner

    from workflows.cli.app import app

    # Given the local conversion cache holding a killed run's half-written entry
    monkeypatch.setenv("DEPLOYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DEPLOYBENCH_CONVERSION_CACHE", str(tmp_path / "conversions"))
    name = f".k1.partial-{dead_pid()}"
    (tmp_path / "conversions" / name).mkdir(parents=True)
    # When `janitor --local --dry-run` runs, Then it is listed and left
    dry = CliRunner().invoke(app, ["janitor", "--local", "--dry-run", "--json"])
    assert json.loads(dry.stdout)["partial_cache_entries"] == [name]
    assert (tmp_path / "conversions" / name).exists()
    # And `janitor --local` removes it
    done = CliRunner().invoke(app, ["janitor", "--local", "--json"])
    assert done.exit_code == 0 and json.loads(done.stdout)["partial_cache_entries"] == [name]
    assert not (tmp_path / "conversions" / name).exists()
