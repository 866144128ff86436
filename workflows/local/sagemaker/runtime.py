"""InvokeEndpoint: route a request to its container, answer as SageMaker's runtime answers.

Routing follows the endpoint's kind: a direct multi-container endpoint needs
``TargetContainerHostname``; an inference-component endpoint needs ``InferenceComponentName`` and
fails at once at zero copies (F12); a serverless endpoint starts its memory-capped container on
the first call (a cold start, F15) and refuses calls beyond MaxConcurrency. A container's error
status becomes ``ModelError`` (424) quoting its body; no answer within 60 s becomes SageMaker's
"invocation timed out" ModelError.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from workflows.local.sagemaker.api import ACCOUNT, ApiError
from workflows.local.sagemaker.components import NO_CAPACITY, ComponentsApi
from workflows.local.sagemaker.container import Container, ContainerFailed, InvocationTimeout
from workflows.local.sagemaker.container_spec import ContainerSpec
from workflows.local.sagemaker.logs import ENDPOINT_LOG_GROUP, instance_id
from workflows.local.sagemaker.metrics import merged_exposition
from workflows.local.sagemaker.models import model_containers
from workflows.local.sagemaker.state import Endpoint, Instance

TARGET_HEADER = "X-Amzn-SageMaker-Target-Container-Hostname"
COMPONENT_HEADER = "X-Amzn-SageMaker-Inference-Component"
COLD_START_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Invocation:
    status: int
    body: bytes
    content_type: str
    variant: str


class RuntimeApi(ComponentsApi):
    def invoke_endpoint(self, name: str, body: bytes, headers: dict[str, str]) -> Invocation:
        """Raises ApiError as the runtime does (ValidationError, ModelError, ThrottlingException)."""
        endpoint = self.endpoints.get(name)
        if endpoint is None:
            raise ApiError("ValidationError", f"Endpoint {name} of account {ACCOUNT} not found.")
        if endpoint.status != "InService":
            raise ApiError(
                "ValidationError",
                f"Endpoint {name} of account {ACCOUNT} is not in service (status {endpoint.status}).",
            )
        variant = endpoint.variants[0]["VariantName"]
        target = headers.get(TARGET_HEADER)
        container, who = self._route(endpoint, target, headers.get(COMPONENT_HEADER))
        if container is None:  # serverless: the first call starts the container
            container = self._cold_start(endpoint)
        forwarded = {k: v for k, v in headers.items() if k in {"Content-Type", "Accept"}}
        traced = self.tracer.sampled(name, self.configs.get(endpoint.config_name) or {})
        started = time.perf_counter()
        limit = (endpoint.variants[0].get("CurrentServerlessConfig") or {}).get("MaxConcurrency")
        with self.lock:
            if limit is not None and endpoint.in_flight >= limit:
                # The runtime's throttling answer carries no message at all.
                raise ApiError("ThrottlingException", None, 400)
            endpoint.in_flight += 1
        try:
            status, output, content_type = container.invoke(body, forwarded)
        except InvocationTimeout:
            raise self._model_error(name, 0, who, (
                f"Your invocation timed out while waiting for a response from container {who}. Review the latency "
                "metrics for each container in Amazon CloudWatch, resolve the issue, and try again."
            )) from None  # fmt: skip
        except OSError as error:
            raise self._model_error(name, 0, who, f"{error}") from error
        finally:
            with self.lock:
                endpoint.in_flight -= 1
        if traced:
            self.tracer.write(
                name,
                stream=f"{variant}/{instance_id(name, variant)}",
                status=status,
                started=started,
                request=(body, headers.get("Content-Type", "")),
                response=(output, content_type),
            )
        if status >= 400:
            raise self._model_error(name, status, who, output.decode("utf-8", "replace"))
        return Invocation(status, output, content_type, variant)

    def endpoint_metrics(self, name: str, component: str | None) -> bytes:
        """Every serving container's /metrics of endpoint ``name`` (of ``component``'s copies), merged.

        Raises:
            ApiError: no such endpoint or component, or no container of it serves an exposition.
        """
        endpoint = self.endpoints.get(name)
        if endpoint is None:
            raise ApiError("ValidationError", f"Endpoint {name} of account {ACCOUNT} not found.")
        with self.lock:
            if endpoint.kind == "components":
                found = self.components.get(component or "")
                if found is None or found.endpoint != name:
                    raise ApiError(
                        "ValidationError", f"Inference Component {component} not found on endpoint {name}."
                    )
                instances = list(found.copies)
            else:
                instances = list(endpoint.instances)
        texts = [
            (f"{instance.id}/{hostname}", text)
            for instance in instances
            for hostname, container in instance.containers.items()
            if (text := container.metrics()) is not None
        ]
        if not texts:
            raise ApiError("ValidationError", f"No container of endpoint {name} serves /metrics.", 404)
        return merged_exposition(texts)

    def _route(
        self, endpoint: Endpoint, target: str | None, component: str | None
    ) -> tuple[Container | None, str]:
        if endpoint.kind == "components":
            return self._route_component(endpoint, component), "primary"
        if component:
            raise ApiError(
                "ValidationError",
                f"Endpoint {endpoint.name} has no inference components; do not set InferenceComponentName.",
            )
        with self.lock:
            instances = list(endpoint.instances)
            endpoint.turn += 1
        if endpoint.kind == "direct":
            if not target:
                raise ApiError(
                    "ValidationError",
                    f"Endpoint {endpoint.name} is configured for direct invocation: specify TargetContainerHostname.",
                )
            instance = instances[endpoint.turn % len(instances)]
            if target not in instance.containers:
                raise ApiError(
                    "ValidationError",
                    f"TargetContainerHostname {target} does not exist on endpoint {endpoint.name} "
                    f"(containers: {', '.join(sorted(instance.containers))}).",
                )
            return instance.containers[target], target
        if target:
            raise ApiError(
                "ValidationError",
                f"Endpoint {endpoint.name} is not configured for direct invocation; do not set TargetContainerHostname.",
            )
        if not instances:
            return None, "primary"
        instance = instances[endpoint.turn % len(instances)]
        return next(iter(instance.containers.values())), "primary"

    def _route_component(self, endpoint: Endpoint, name: str | None) -> Container:
        if not name:
            raise ApiError(
                "ValidationError",
                "Inference Component Name header is required for endpoints to which you plan to deploy inference "
                "components. Please include Inference Component Name header or consider using SageMaker models.",
            )
        component = self.components.get(name)
        if component is None or component.endpoint != endpoint.name:
            raise ApiError(
                "ValidationError", f"Inference Component {name} not found on endpoint {endpoint.name}."
            )
        config = self.configs.get(endpoint.config_name) or {"ProductionVariants": [{}]}
        instance_type = endpoint.instance_type(config["ProductionVariants"][0])
        container = self.component_copy(name)
        if container is None or self.planned_fault("F12", instance_type):
            raise ApiError("ValidationError", NO_CAPACITY)
        return container

    def start_serverless(self, endpoint: Endpoint) -> None:
        # Provisioned: initialized and ready to respond, as the instance-backed endpoints are when
        # InService (a real invocation answered), not only listening.
        self._cold_start(endpoint, probe=True)

    def _cold_start(self, endpoint: Endpoint, *, probe: bool = False) -> Container:
        with endpoint.cold_start:
            if endpoint.instances:
                return next(iter(endpoint.instances[0].containers.values()))
            config = self.configs[endpoint.config_name]
            variant = config["ProductionVariants"][0]
            definition = self._model_definition(variant["ModelName"])
            node = instance_id(endpoint.name, variant["VariantName"], "serverless")
            spec = ContainerSpec(
                endpoint=endpoint.name,
                variant=variant["VariantName"],
                hostname="primary",
                environment={str(k): str(v) for k, v in (definition.get("Environment") or {}).items()},
                log_path=self.log_dir / f"{endpoint.name}.log",
                memory_mb=int(variant["ServerlessConfig"]["MemorySizeInMB"]),
                log_group=ENDPOINT_LOG_GROUP.format(name=endpoint.name),
                log_stream=f"{variant['VariantName']}/{node}",
                image=str(definition.get("Image", "")),
            )
            container = self.new_container(spec, self.root / endpoint.name / "0-primary")
            with self.lock:
                endpoint.starting.append(container)
            try:
                self.place_model_data(container, definition)
                container.launch()
                # On demand, serverless has no health check before traffic: the request waits on the
                # cold start.
                container.wait_healthy(COLD_START_TIMEOUT_S, probe=probe)
            except ContainerFailed as error:
                container.stop()
                raise self._model_error(endpoint.name, 500, "primary", str(error)) from error
            finally:
                with self.lock:
                    endpoint.starting.remove(container)
            with self.lock:
                endpoint.instances = [Instance(node, {"primary": container})]
            return container

    def _model_definition(self, model_name: str) -> dict[str, Any]:
        return model_containers(self._model(model_name))[0]

    def _model_error(self, name: str, status: int, who: str, message: str) -> ApiError:
        kind = "client" if 400 <= status < 500 else "server"
        group = ENDPOINT_LOG_GROUP.format(name=name)
        log_url = (
            f"https://{self.region}.console.aws.amazon.com/cloudwatch/home?region={self.region}#logEventViewer:"
            f"group={group} in account {ACCOUNT}"
        )
        return ApiError(
            "ModelError",
            f'Received {kind} error ({status}) from {who} with message "{message}". See {log_url} for more information.',
            424,
            OriginalStatusCode=status,
            OriginalMessage=message,
            LogStreamArn=f"arn:aws:logs:{self.region}:{ACCOUNT}:log-group:{group}",
        )
