"""How a local container's server process is started: command line and environment, per server kind.

MMS (the DLC's stack), per container:
- ``SAGEMAKER_BASE_DIR=<workdir>/ml``: the toolkit reads the model from ``<base>/model`` (the DLC's
  /opt/ml/model) and ``code/`` under it;
- ``SAGEMAKER_BIND_TO_PORT`` and ``MMS_INFERENCE_ADDRESS``/``MMS_MANAGEMENT_ADDRESS`` on 127.0.0.1:
  the toolkit writes ``0.0.0.0:<port>`` into its config; MMS's ``enable_envvars_config=true`` lets the
  variables override it;
- ``TMPDIR``/``TEMP``/``TMP``: MMS's pid file (a stale one refuses the next start with "Model server
  is already running"), ``java.io.tmpdir`` and the workers' unix sockets;
- ``LOG_LOCATION``/``METRICS_LOCATION``: the log4j2 files, else ``./logs`` of whoever started it;
- ``PATH`` starting with the environment's ``bin``: the toolkit runs ``multi-model-server`` by name;
- ``code/requirements.txt`` is installed by the toolkit's own ``pip install -r`` at start, offline
  from the wheelhouse into ``<workdir>/pydeps`` (on the workers' ``PYTHONPATH``): installing into the
  shared environment would leak one container's requirements into every later one and hide F01.
- A network-isolated model (EnableNetworkIsolation) gets no wheelhouse, and every proxy variable
  points at a port nothing listens on: like the real isolated container, it reaches no package index,
  so only wheels vendored in the artifact (code/wheels/, F37) install.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from workflows.container.environment import ServingStack
from workflows.local.sagemaker.container_spec import ContainerSpec

DLC_ENTRYPOINT = Path(__file__).with_name("dlc_entrypoint.py")
LIGHT_SERVER = Path(__file__).with_name("light_server.py")
CONTAINER_DIR_ENV = "DEPLOYBENCH_CONTAINER_DIR"
# Never inherited: they would point the container's Python or pip at the engine's environment.
_HOST_ONLY = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")
# Port 9 (discard) on the loopback: nothing listens there, so every index request fails at once.
UNREACHABLE = "http://127.0.0.1:9"
ISOLATED_PROXIES = ("PIP_PROXY", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY")


def _host_environment() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if key not in _HOST_ONLY and not key.startswith("PIP_") and not key.startswith("AWS_ENDPOINT_URL")
    }


def command_and_environment(
    stack: ServingStack, *, model_dir: Path, workdir: Path, tmp: Path, port: int, spec: ContainerSpec
) -> tuple[list[str], dict[str, str]]:
    """The command and environment that start ``spec``'s server on ``127.0.0.1:port``."""
    env = _host_environment()
    env.update(spec.environment)
    address = f"http://127.0.0.1:{port}"
    env.update(
        {
            CONTAINER_DIR_ENV: str(workdir),
            "SAGEMAKER_BASE_DIR": str(model_dir.parent),
            "SAGEMAKER_BIND_TO_PORT": str(port),
            "TMPDIR": str(tmp),
            "TEMP": str(tmp),
            "TMP": str(tmp),
            "PYTHONUNBUFFERED": "1",
        }
    )
    if stack.kind == "light" or stack.environment is None:
        return [sys.executable, str(LIGHT_SERVER), "--model-dir", str(model_dir)], env
    dlc = stack.environment
    logs = workdir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    pydeps = workdir / "pydeps"
    env.update(
        {
            "MMS_INFERENCE_ADDRESS": address,
            "MMS_MANAGEMENT_ADDRESS": address,
            "PATH": f"{dlc.bin}{os.pathsep}{env.get('PATH', '')}",
            "LOG_LOCATION": str(logs),
            "METRICS_LOCATION": str(logs),
            # The toolkit's `pip install -r code/requirements.txt`, offline, into this container only;
            # PIP_CONFIG_FILE=/dev/null keeps the machine's index and constraint settings out of it.
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(dlc.wheelhouse),
            "PIP_TARGET": str(pydeps),
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PYTHONPATH": str(pydeps),
        }
    )
    if spec.isolated:
        env.pop("PIP_FIND_LINKS")
        env.update(dict.fromkeys(ISOLATED_PROXIES, UNREACHABLE))
    return [str(dlc.python), str(DLC_ENTRYPOINT)], env
