from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.support.aws import BUCKET, LOCAL_ENDPOINT_ENV, REGION, ROLE, Aws
from workflows.spec.pipeline import RunSpec, parse_spec

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "deploybench")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]

# Every test's AWS requests from Lambda handlers are checked against the stack's IAM policies.
pytest_plugins = ("tests.support.iam",)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer BERT with random weights and MiniLM's tokenizer (converts in seconds)."""
    from workflows.conversion.random_models import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-bert")


def fast_spec(source: str | Path, **overrides: Any) -> RunSpec:
    """A spec that measures briefly: for path tests, not for numbers."""
    data: dict[str, Any] = {
        "name": "path-test",
        "model": {"source": str(source), "task": "embedding", "max_sequence_length": 64},
        "hosting": {"instance_type_fallbacks": ["ml.c6i.xlarge", "ml.c6i.2xlarge"]},
        "wait": {"poll_initial_s": 5, "poll_max_s": 30},
        "benchmark": {
            "batch_sizes": [1, 2],
            "sequence_lengths": ["natural", 16],
            "min_duration_s": 0.3,
            "min_requests": 3,
            "max_duration_s": 1.5,
            # Windows of 0.1 s, not of the 100 requests a bounded p99 needs: paths, not numbers.
            "windows": "time",
            "warmup_max_requests": 20,
            # One level: the default's second (4 clients) doubles every path test's measuring.
            "concurrency": [1],
        },
    }
    for key, value in overrides.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return parse_spec(data)


SERVER_MARKERS = (
    "light_server.py",
    "model_service_worker",
    "mms.model_server",
    "serving.main",
    "dlc_entrypoint.py",
    "com.amazonaws.ml.mms.ModelServer",
)
# Inherited by every server the suite starts (also through the CLI's subprocess). MMS's JVM is
# reparented to init when the multi-model-server CLI exits, so it is no child of this process: the
# marker is how it is recognised as ours.
SESSION_MARKER = "DEPLOYBENCH_TEST_SESSION"
os.environ.setdefault(SESSION_MARKER, uuid.uuid4().hex)


def serving_processes() -> list[psutil.Process]:
    """Model servers this test session started that are still running (there must be none once a
    run or an engine is over)."""
    children = {p.pid for p in psutil.Process().children(recursive=True)}
    found = []
    for process in psutil.process_iter():
        try:
            cmdline = " ".join(process.cmdline())
            if (
                not any(marker in cmdline for marker in SERVER_MARKERS)
                or process.status() == psutil.STATUS_ZOMBIE
            ):
                continue
            if process.pid in children or process.environ().get(SESSION_MARKER) == os.environ[SESSION_MARKER]:
                found.append(process)
        except psutil.Error:
            continue
    return found


@pytest.fixture(scope="session", autouse=True)
def no_orphan_servers() -> Any:
    """The suite must leave no model server process behind."""
    yield
    leftovers = serving_processes()
    assert not leftovers, f"model servers left running: {[p.pid for p in leftovers]}"


@pytest.fixture
def aws_bucket() -> str | None:
    """The bucket ``aws`` creates (a module overrides this fixture to use its own name, or None for none)."""
    return BUCKET


@pytest.fixture
def aws_moto_config() -> dict[str, Any] | None:
    """moto's configuration for ``aws`` (a module overrides this fixture to change it)."""
    return None


@pytest.fixture
def aws(
    monkeypatch: pytest.MonkeyPatch, aws_bucket: str | None, aws_moto_config: dict[str, Any] | None
) -> Any:
    """moto's account, as a deployed function sees it: one region, the stack's bucket and role settings,
    no local SageMaker endpoint in the environment, and fresh handler clients (``tests.support.aws.Aws``)."""
    from moto import mock_aws

    from lambdas import clients
    from lambdas.observability import metrics

    for key in (*LOCAL_ENDPOINT_ENV, "AWS_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("DEPLOYBENCH_BUCKET", aws_bucket or BUCKET)
    monkeypatch.setenv("DEPLOYBENCH_SAGEMAKER_ROLE_ARN", ROLE)
    # Powertools read the namespace when lambdas.observability was first imported: set it as Lambda's env would.
    monkeypatch.setattr(metrics, "namespace", "deploybench")
    with mock_aws(**({"config": aws_moto_config} if aws_moto_config else {})):  # type: ignore[call-overload]
        clients.clear()
        account = Aws(bucket=aws_bucket or BUCKET)
        if aws_bucket:
            account.s3.create_bucket(Bucket=aws_bucket)
        yield account
        clients.clear()


@pytest.fixture(scope="session", autouse=True)
def conversion_cache(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One conversion cache for the session: a conversion with the same inputs (model files,
    settings, converter version) is paid for once, by the first test, through the convert step,
    the local engine and the CLI alike; the user's own cache is never touched."""
    from workflows.settings import CONVERSION_CACHE_ENV

    root = tmp_path_factory.mktemp("conversion-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CONVERSION_CACHE_ENV, str(root))
        yield root


def cached_conversion(request: Any, *, source: Path, out: Path, scratch: Path) -> Any:
    """``build_artifact`` through the session's conversion cache; returns the manifest."""
    from workflows.conversion.build import build_artifact
    from workflows.conversion.cache import CacheBounds, converted
    from workflows.conversion.cache_stores import LocalStore
    from workflows.settings import CONVERSION_CACHE_ENV

    location = os.environ.get(CONVERSION_CACHE_ENV)
    manifest, _ = converted(
        request,
        source=source,
        out=out,
        build=lambda: build_artifact(request, source=source, out=out, scratch=scratch),
        store=LocalStore(Path(location)) if location else None,
        bounds=CacheBounds(max_bytes=20 << 30, max_age_s=86400.0),
    )
    return manifest


@pytest.fixture(scope="session")
def tiny_artifact(tiny_bert: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The converted, verified artifact folder of the tiny BERT (what model.tar.gz holds)."""
    from workflows.contracts import StepRequest

    root = tmp_path_factory.mktemp("artifact")
    request = StepRequest(run_id="fixture", spec=fast_spec(tiny_bert))
    cached_conversion(request, source=tiny_bert, out=root / "artifact", scratch=root / "scratch")
    return root / "artifact"


@pytest.fixture(scope="session")
def random_model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Build (once per session) a tiny random-weight encoder: random_model(family, task, **options)."""
    from workflows.conversion.random_models import build_random_model

    built: dict[tuple[Any, ...], Path] = {}

    def build(family: str, task: str = "embedding", **options: Any) -> Path:
        key = (family, task, *sorted(options.items()))
        if key not in built:
            name = "-".join(str(part) for part in key).replace(".", "_").replace("(", "").replace(")", "")
            built[key] = build_random_model(
                family, tmp_path_factory.mktemp("models") / name, task=task, **options
            )
        return built[key]

    return build


def convert_folder(source: Path, root: Path, *, cached: bool = True, **convert: Any) -> Path:
    """Convert ``source`` with ``fast_spec`` (task from its config) into ``root/artifact``.

    ``cached`` goes through the session's conversion cache; a test that patches the converter
    itself passes ``cached=False`` (a patch is not one of the cache's inputs).
    """
    import json

    from workflows.contracts import StepRequest
    from workflows.conversion.build import build_artifact

    config = json.loads((source / "config.json").read_text())
    task = "classification" if "ForSequenceClassification" in config["architectures"][0] else "embedding"
    spec = fast_spec(source, model={"task": task}, convert=convert)
    build = cached_conversion if cached else build_artifact
    build(
        StepRequest(run_id="fixture", spec=spec),
        source=source,
        out=root / "artifact",
        scratch=root / "scratch",
    )
    return root / "artifact"
