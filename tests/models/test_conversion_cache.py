"""The conversion cache: an artifact is reused only for exactly the inputs it was built from."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fast_spec
from workflows.cli.executions import cache_line
from workflows.contracts import StepRequest
from workflows.conversion import build as convert
from workflows.conversion import cache
from workflows.conversion.cache import CacheBounds, cache_inputs, cache_key, converted
from workflows.conversion.cache_stores import LocalStore
from workflows.conversion.manifest import file_entries

BOUNDS = CacheBounds(max_bytes=1 << 40, max_age_s=86400.0)
REGION = "us-east-1"
BUCKET = "cache-bucket"


class ConversionAttempted(Exception):
    """Raised by a stand-in converter: the cache chose to convert instead of serving."""


def refuse_to_convert(*_args: Any, **_kwargs: Any) -> Any:
    raise ConversionAttempted


def request_for(source: Path, run_id: str = "cache-1", **overrides: Any) -> StepRequest:
    return StepRequest(run_id=run_id, spec=fast_spec(source, **overrides))


@pytest.fixture(scope="module")
def seeded(tiny_bert: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store holding the tiny BERT's artifact (one real conversion), and that artifact."""
    root = tmp_path_factory.mktemp("seeded")
    out = root / "first"
    manifest, outcome = converted(
        request_for(tiny_bert),
        source=tiny_bert,
        out=out,
        build=lambda: convert.build_artifact(
            request_for(tiny_bert), source=tiny_bert, out=out, scratch=root / "scratch"
        ),
        store=LocalStore(root / "store"),
        bounds=BOUNDS,
    )
    assert outcome.status == "miss"
    assert manifest.parity.passed
    return root / "store", out


@pytest.fixture
def store(seeded: tuple[Path, Path], tmp_path: Path) -> LocalStore:
    shutil.copytree(seeded[0], tmp_path / "store")
    return LocalStore(tmp_path / "store")


def test_the_same_inputs_are_served_from_the_cache_without_converting(
    tiny_bert: Path,
    seeded: tuple[Path, Path],
    store: LocalStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a stored conversion, and a converter that fails if it is called

    monkeypatch.setattr(convert, "build_artifact", refuse_to_convert)
    # When another run (another id: a sweep's next member) converts the same model with the same settings
    started = time.perf_counter()
    manifest, outcome = converted(
        request_for(tiny_bert, run_id="cache-2"),
        source=tiny_bert,
        out=tmp_path / "out",
        build=lambda: convert.build_artifact(
            request_for(tiny_bert, run_id="cache-2"),
            source=tiny_bert,
            out=tmp_path / "out",
            scratch=tmp_path / "scratch",
        ),
        store=store,
        bounds=BOUNDS,
    )
    # Then it is a hit, the artifact is file for file the one converted first, and it took no conversion
    assert outcome.status == "hit"
    assert outcome.location == str(store.root / str(outcome.key))
    assert file_entries(tmp_path / "out") == file_entries(seeded[1])
    assert manifest.files == file_entries(seeded[1])
    assert time.perf_counter() - started < 5


def weights_changed(source: Path, target: Path) -> Path:
    from safetensors.numpy import load_file, save_file

    shutil.copytree(source, target)
    tensors = load_file(str(target / "model.safetensors"))
    name = sorted(tensors)[0]
    tensors[name] = tensors[name] + 0.001
    save_file(tensors, str(target / "model.safetensors"), metadata={"format": "pt"})
    return target


def test_a_model_whose_files_changed_is_never_served_the_old_artifact(
    tiny_bert: Path, store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a stored conversion, and the same model folder with one weight changed by 0.001

    changed = weights_changed(tiny_bert, tmp_path / "changed")
    monkeypatch.setattr(convert, "build_artifact", refuse_to_convert)
    # When it is converted with the same settings
    # Then the cache converts (the stand-in converter is reached) instead of serving the old artifact
    with pytest.raises(ConversionAttempted):
        converted(
            request_for(changed),
            source=changed,
            out=tmp_path / "out",
            build=lambda: convert.build_artifact(
                request_for(changed), source=changed, out=tmp_path / "out", scratch=tmp_path / "scratch"
            ),
            store=store,
            bounds=BOUNDS,
        )
    assert not (tmp_path / "out").exists()


def test_a_damaged_entry_is_never_served_and_is_removed(
    tiny_bert: Path, store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a stored conversion whose graph was altered on disk after it was stored

    (entry,) = store.entries()
    graph = store.root / entry.key / "artifact" / "model.onnx"
    data = bytearray(graph.read_bytes())
    data[-10] ^= 0xFF
    graph.write_bytes(bytes(data))
    monkeypatch.setattr(convert, "build_artifact", refuse_to_convert)
    # When the same inputs are converted
    with pytest.raises(ConversionAttempted):
        converted(
            request_for(tiny_bert),
            source=tiny_bert,
            out=tmp_path / "out",
            build=lambda: convert.build_artifact(
                request_for(tiny_bert), source=tiny_bert, out=tmp_path / "out", scratch=tmp_path / "scratch"
            ),
            store=store,
            bounds=BOUNDS,
        )
    # Then the damaged entry was not served but removed, and the output folder holds nothing
    assert store.entries() == []
    assert not (tmp_path / "out").exists()


def test_parallel_runs_with_the_same_inputs_convert_once(
    tiny_bert: Path, seeded: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an empty store, and a converter stand-in that takes a second and copies the seeded
    # artifact (the lock, not the conversion, is under test), counting its calls
    from workflows.conversion.manifest import read_manifest

    calls: list[str] = []

    def slow_copy(request: StepRequest, *, source: Path, out: Path, scratch: Path) -> Any:
        calls.append(request.run_id)
        time.sleep(1.0)
        shutil.copytree(seeded[1], out)
        return read_manifest(out)

    monkeypatch.setattr(convert, "build_artifact", slow_copy)
    store = LocalStore(tmp_path / "store")
    statuses: dict[str, str] = {}

    def member(run_id: str) -> None:
        _, outcome = converted(
            request_for(tiny_bert, run_id=run_id),
            source=tiny_bert,
            out=tmp_path / run_id,
            build=lambda: convert.build_artifact(
                request_for(tiny_bert, run_id=run_id),
                source=tiny_bert,
                out=tmp_path / run_id,
                scratch=tmp_path / f"{run_id}-scratch",
            ),
            store=store,
            bounds=BOUNDS,
        )
        statuses[run_id] = outcome.status

    # When two sweep members convert the same model at the same time
    threads = [threading.Thread(target=member, args=(f"member-{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    # Then one converted and the other was served its entry
    assert len(calls) == 1
    assert sorted(statuses.values()) == ["hit", "miss"]
    assert file_entries(tmp_path / "member-0") == file_entries(tmp_path / "member-1")


VARIANTS: dict[str, dict[str, Any]] = {
    "precision": {"convert": {"precision": "int8"}},
    "opset": {"convert": {"opset": 18}},
    "optimize": {"convert": {"optimize": "none"}},
    "parity tolerance": {"convert": {"parity_tolerance": 1e-4}},
    "an INT8 guard floor": {"convert": {"int8_min_cosine": 0.99}},
    "pack compression": {"pack": {"compression": "none"}},
    "sequence length": {"model": {"max_sequence_length": 128}},
    "task": {"model": {"task": "classification"}},
    "a GPU target (serving plan)": {"hosting": {"instance_type_fallbacks": ["ml.g5.xlarge"]}},
}


@pytest.mark.parametrize("change", list(VARIANTS))
def test_every_setting_the_artifact_depends_on_is_in_the_key(tiny_bert: Path, change: str) -> None:
    # Given the key of the default request, When one convert, pack, model or serving setting changes
    base = cache_key(cache_inputs(request_for(tiny_bert), tiny_bert))
    other = cache_key(cache_inputs(request_for(tiny_bert, **VARIANTS[change]), tiny_bert))
    # Then the key changes
    assert other != base


def test_what_does_not_change_the_artifact_keeps_the_key(tiny_bert: Path) -> None:
    # Given two sweep members: other run ids, other CPU instance types, other benchmark shapes
    first = request_for(tiny_bert, run_id="sweep-a")
    second = request_for(
        tiny_bert,
        run_id="sweep-b",
        hosting={"instance_type_fallbacks": ["ml.c6i.2xlarge"]},
        benchmark={"batch_sizes": [4]},
    )
    # Then both have one key: the model is converted once for the sweep
    assert cache_key(cache_inputs(first, tiny_bert)) == cache_key(cache_inputs(second, tiny_bert))


def test_the_converter_version_is_in_the_key(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the key with the converter as installed
    request = request_for(tiny_bert)
    cache.converter_version.cache_clear()
    base = cache_key(cache_inputs(request, tiny_bert))
    # When a converter library has another version
    monkeypatch.setattr(cache, "_library_version", lambda name: "99.0" if name == "onnxruntime" else "1")
    cache.converter_version.cache_clear()
    library = cache_key(cache_inputs(request, tiny_bert))
    monkeypatch.undo()
    # And when one line of the converter's source changes
    shutil.copytree(cache.ROOT / "workflows", tmp_path / "workflows")
    shutil.copytree(cache.ROOT / "artifacts", tmp_path / "artifacts")
    quantize = tmp_path / "workflows" / "conversion" / "quantize.py"
    quantize.write_text(quantize.read_text() + "\n# changed\n")
    monkeypatch.setattr(cache, "ROOT", tmp_path)
    cache.converter_version.cache_clear()
    source = cache_key(cache_inputs(request, tiny_bert))
    monkeypatch.undo()
    cache.converter_version.cache_clear()
    # Then each is another key, and the unchanged converter has its old one
    assert len({base, library, source}) == 3
    assert cache_key(cache_inputs(request, tiny_bert)) == base


@pytest.mark.slow
def test_a_second_identical_local_run_takes_its_artifact_from_the_cache(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workflows.container.environment import SERVER_ENV
    from workflows.contracts import PipelineState
    from workflows.execution.pipeline import run_local

    # Given an empty cache, and the light server (the path, not the serving stack, is under test)
    monkeypatch.setenv(SERVER_ENV, "light")
    monkeypatch.setenv("DEPLOYBENCH_CONVERSION_CACHE", str(tmp_path / "cache"))
    # When the same spec runs twice on the local engine, as `run --local` runs it
    outputs = []
    for run_id in ("twice-1", "twice-2"):
        state = PipelineState(run_id=run_id, spec=fast_spec(tiny_bert))
        outcome, leaked = run_local(state, results_dir=tmp_path / "results", time_scale=200.0)
        assert outcome.status == "SUCCEEDED", outcome.cause
        assert leaked == []
        outputs.append(outcome.output or {})
    # Then the first converted and stored, the second was a hit on the same key
    # (how long a hit takes is measured by bench/conversion_cache.py, not asserted here)
    first, second = (output["convert"] for output in outputs)
    assert (first["cache"]["status"], second["cache"]["status"]) == ("miss", "hit")
    assert first["cache"]["key"] == second["cache"]["key"]
    assert second["manifest"]["files"] == first["manifest"]["files"]
    # And the run's summary says so
    line = cache_line(second)
    assert line is not None and line.startswith("conversion cache hit")
