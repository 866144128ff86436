"""Processing jobs: the job's container entry run as a local subprocess.

ProcessingInputs are downloaded from S3 into the job's folder before it starts, ProcessingOutputs
uploaded back when it ends; every ``/opt/ml/...`` path in the entrypoint, arguments and environment
is mapped to ``<job folder>/opt/ml/...``. ``python``/``python3`` as the entry program is the engine's
interpreter (the container image is not run). The job reaches the local SageMaker through
``AWS_ENDPOINT_URL_SAGEMAKER[_RUNTIME]``, and its routers through ``..._INFERENCE_ROUTER_RUNTIME``; it
cannot reach the engine's in-process S3, which is why inputs and outputs are staged. Status: InProgress
-> Completed, or Failed with FailureReason and ExitMessage (the tail of its output), or Stopping ->
Stopped; MaxRuntimeInSeconds is enforced.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from workflows import clock
from workflows.local.sagemaker.api import ApiError, epoch, not_found, valid_name, validation
from workflows.local.sagemaker.logs import PROCESSING_LOG_GROUP, instance_id
from workflows.local.sagemaker.state import BackendState
from workflows.processes import groups, lifeline
from workflows.processes.guardian import group_members

CONTAINER_ROOT = "/opt/ml/"
EXIT_MESSAGE_CHARS = 1024
DEFAULT_MAX_RUNTIME_S = 24 * 3600


@dataclass
class ProcessingJob:
    name: str
    arn: str
    request: dict[str, Any]
    status: str
    created: datetime
    modified: datetime
    started: datetime | None = None
    ended: datetime | None = None
    failure_reason: str | None = None
    exit_message: str | None = None
    process: subprocess.Popen[bytes] | None = None
    stop_requested: bool = False


def job_name_in_use(arn: str) -> ApiError:
    """CreateProcessingJob's answer to a name used before, by a running or a finished job."""
    return ApiError(
        "ResourceInUse",
        "Job name must be unique within an AWS account and region, and a job with this name already "
        f"exists ({arn})",
    )


def _s3_parts(uri: str) -> tuple[str, str]:
    if not uri.startswith("s3://"):
        raise validation(f"{uri} is not an S3 URI.")
    bucket, _, key = uri[5:].partition("/")
    return bucket, key


class ProcessingJobsApi(BackendState):
    def create_processing_job(self, body: dict[str, Any]) -> dict[str, Any]:
        name = valid_name(body, "ProcessingJobName")
        app = body.get("AppSpecification") or {}
        if not app.get("ImageUri"):
            raise validation("AppSpecification.ImageUri is required.")
        if not app.get("ContainerEntrypoint"):
            raise validation(
                "The local SageMaker runs a processing job's AppSpecification.ContainerEntrypoint as a local "
                "process; give the entrypoint (the image itself is not run)."
            )
        for item in body.get("ProcessingInputs") or []:
            s3 = item.get("S3Input") or {}
            _s3_parts(str(s3.get("S3Uri", "")))
            if not str(s3.get("LocalPath", "")).startswith(CONTAINER_ROOT):
                raise validation(
                    f"ProcessingInput {item.get('InputName')} LocalPath must be under /opt/ml/processing."
                )
        for item in (body.get("ProcessingOutputConfig") or {}).get("Outputs") or []:
            _s3_parts(str((item.get("S3Output") or {}).get("S3Uri", "")))
        now = clock.now()
        arn = self.arn("processing-job", name)
        with self.lock:
            # A job's name is never free again: jobs are never deleted, finished or not (as on AWS).
            if name in self.jobs:
                raise job_name_in_use(arn)
            job = ProcessingJob(
                name, arn, {k: v for k, v in body.items() if k != "Tags"}, "InProgress", now, now
            )
            self.jobs[name] = job
            self.tags[arn] = list(body.get("Tags") or [])
        self.spawn(self._run_job, job, name=f"processing-{name}")
        return {"ProcessingJobArn": arn}

    def _job_dir(self, job: ProcessingJob) -> Path:
        return self.root.parent / "processing-jobs" / job.name

    def _map(self, value: str, job_dir: Path) -> str:
        return value.replace(CONTAINER_ROOT, f"{job_dir}/opt/ml/")

    def _run_job(self, job: ProcessingJob) -> None:
        job_dir = self._job_dir(job)
        log_path = job_dir / "output.log"
        request = job.request
        try:
            job_dir.mkdir(parents=True, exist_ok=True)
            self._download_inputs(request, job_dir)
            for item in (request.get("ProcessingOutputConfig") or {}).get("Outputs") or []:
                Path(self._map(item["S3Output"]["LocalPath"], job_dir)).mkdir(parents=True, exist_ok=True)
            with self.lock:
                job.started = clock.now()
            with clock.real_work():
                code = self._execute(job, job_dir, log_path)
            if job.stop_requested:
                self._finish(job, "Stopped")
                return
            if code != 0:
                tail = log_path.read_text(encoding="utf-8", errors="replace")[-EXIT_MESSAGE_CHARS:]
                self._finish(
                    job,
                    "Failed",
                    f"AlgorithmError: See job logs for more information (exit code {code})",
                    tail,
                )
                return
            self._upload_outputs(request, job_dir)
            self._finish(job, "Completed", exit_message="")
        except Exception as error:  # noqa: BLE001 - staging errors end the job, as on AWS
            self._finish(job, "Failed", f"ClientError: {error}")
        finally:
            if self.shipper is not None:
                self.shipper.unfollow(log_path)

    def _download_inputs(self, request: dict[str, Any], job_dir: Path) -> None:
        for item in request.get("ProcessingInputs") or []:
            s3 = item["S3Input"]
            bucket, prefix = _s3_parts(s3["S3Uri"])
            target = Path(self._map(s3["LocalPath"], job_dir))
            target.mkdir(parents=True, exist_ok=True)
            paginator = self.s3.get_paginator("list_objects_v2")
            found = False
            for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
                for entry in page.get("Contents", []):
                    key = entry["Key"]
                    relative = key[len(prefix) :].lstrip("/") or key.rsplit("/", 1)[-1]
                    destination = target / relative
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    self.s3.download_file(bucket, key, str(destination))
                    found = True
            if not found:
                raise RuntimeError(
                    f'No S3 objects found under S3 URL "{s3["S3Uri"]}" given in input data source.'
                )

    def _execute(self, job: ProcessingJob, job_dir: Path, log_path: Path) -> int:
        request = job.request
        app = request["AppSpecification"]
        command = [
            self._map(str(a), job_dir)
            for a in [*app["ContainerEntrypoint"], *(app.get("ContainerArguments") or [])]
        ]
        if command[0] in {"python", "python3"}:
            command[0] = sys.executable
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
        env.update(
            {str(k): self._map(str(v), job_dir) for k, v in (request.get("Environment") or {}).items()}
        )
        env.update(
            {
                "AWS_ENDPOINT_URL_SAGEMAKER": self.url,
                "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": self.url,
                "AWS_ENDPOINT_URL_SAGEMAKER_INFERENCE_ROUTER_RUNTIME": self.url,
                "AWS_DEFAULT_REGION": self.region,
                "AWS_REGION": self.region,
                "AWS_ACCESS_KEY_ID": env.get("AWS_ACCESS_KEY_ID", "testing"),
                "AWS_SECRET_ACCESS_KEY": env.get("AWS_SECRET_ACCESS_KEY", "testing"),
                "PYTHONUNBUFFERED": "1",
            }
        )
        limit = float(
            (request.get("StoppingCondition") or {}).get("MaxRuntimeInSeconds") or DEFAULT_MAX_RUNTIME_S
        )
        # Bound to the engine's life: a SIGKILLed CLI leaves no load generator running.
        command, lifeline_fds = lifeline.bound(command)
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                cwd=job_dir, start_new_session=True, pass_fds=lifeline_fds,
            )  # fmt: skip
        groups.record(process.pid, what=f"processing job {job.name}")
        with self.lock:
            job.process = process
        if self.shipper is not None:
            self.shipper.follow(
                log_path,
                group=PROCESSING_LOG_GROUP,
                stream=f"{job.name}/algo-1-{instance_id(job.name)[2:12]}",
            )
        deadline = time.monotonic() + limit
        while process.poll() is None:
            if time.monotonic() > deadline or job.stop_requested or self._stopping.is_set():
                if not job.stop_requested:
                    with log_path.open("a", encoding="utf-8") as log:
                        log.write(f"Stopped: the job exceeded MaxRuntimeInSeconds ({limit:.0f} s)\n")
                kill_group(process)
                break
            time.sleep(0.1)
        kill_group(process)  # whatever the job left running in its group
        code = process.wait()
        if not group_members(process.pid):
            groups.forget(process.pid)
        return code

    def _upload_outputs(self, request: dict[str, Any], job_dir: Path) -> None:
        for item in (request.get("ProcessingOutputConfig") or {}).get("Outputs") or []:
            s3 = item["S3Output"]
            bucket, prefix = _s3_parts(s3["S3Uri"])
            source = Path(self._map(s3["LocalPath"], job_dir))
            for path in sorted(p for p in source.rglob("*") if p.is_file()):
                key = f"{prefix.rstrip('/')}/{path.relative_to(source).as_posix()}"
                self.s3.upload_file(str(path), bucket, key)

    def _finish(
        self, job: ProcessingJob, status: str, reason: str | None = None, exit_message: str | None = None
    ) -> None:
        with self.lock:
            job.status, job.modified, job.ended = status, clock.now(), clock.now()
            job.failure_reason, job.exit_message = reason, exit_message

    def _job(self, name: str) -> ProcessingJob:
        job = self.jobs.get(name)
        if job is None:
            raise not_found("processing job", self.arn("processing-job", name))
        return job

    def describe_processing_job(self, body: dict[str, Any]) -> dict[str, Any]:
        job = self._job(body["ProcessingJobName"])
        with self.lock:
            result = {
                **job.request,
                "ProcessingJobArn": job.arn,
                "ProcessingJobStatus": job.status,
                "CreationTime": epoch(job.created),
                "LastModifiedTime": epoch(job.modified),
            }
            if job.started is not None:
                result["ProcessingStartTime"] = epoch(job.started)
            if job.ended is not None:
                result["ProcessingEndTime"] = epoch(job.ended)
            if job.failure_reason is not None:
                result["FailureReason"] = job.failure_reason
            if job.exit_message is not None:
                result["ExitMessage"] = job.exit_message
        return result

    def stop_processing_job(self, body: dict[str, Any]) -> dict[str, Any]:
        job = self._job(body["ProcessingJobName"])
        with self.lock:
            if job.status != "InProgress":
                raise validation(
                    f"The processing job {job.name} is {job.status}; only an InProgress job can be stopped."
                )
            job.status, job.modified, job.stop_requested = "Stopping", clock.now(), True
        return {}

    def list_processing_jobs(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            items = [
                {
                    "ProcessingJobName": j.name,
                    "ProcessingJobArn": j.arn,
                    "CreationTime": epoch(j.created),
                    "LastModifiedTime": epoch(j.modified),
                    "ProcessingJobStatus": j.status,
                    **({"ProcessingEndTime": epoch(j.ended)} if j.ended else {}),
                    **({"FailureReason": j.failure_reason} if j.failure_reason else {}),
                }
                for n, j in sorted(self.jobs.items())
                if body.get("NameContains", "") in n and body.get("StatusEquals", j.status) == j.status
            ]
        return {"ProcessingJobSummaries": items}

    def stop_all_jobs(self) -> None:
        with self.lock:
            running = [j for j in self.jobs.values() if j.process is not None and j.process.poll() is None]
        for job in running:
            job.stop_requested = True
            if job.process is not None:
                kill_group(job.process)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the job's process group, SIGKILL what is left after 5 s."""
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if not group_members(process.pid):
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and group_members(process.pid):
            process.poll()
            time.sleep(0.05)
