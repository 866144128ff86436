"""Entry point of a local DLC-like serving container (run by the DLC-like environment's python).

It is what the HF inference DLC's ``dockerd-entrypoint.py serve`` runs —
``sagemaker_huggingface_inference_toolkit.serving.main()``, which writes the MMS config, runs
``pip install -r code/requirements.txt``, starts Multi Model Server and waits on it — with two
redirections so that several containers can run side by side on one machine as any user:

* the MMS config file: the toolkit writes a fixed ``/etc/sagemaker-mms.properties`` (shared between
  servers, and root-only); here it is ``$DEPLOYBENCH_CONTAINER_DIR/mms.properties``;
* finding "the" MMS JVM: the toolkit scans every process on the machine and fails with "multiple
  mms model servers are not supported" when another container runs (leaving its own JVM orphaned);
  here it only matches the JVM started with this container's config file.

Everything else (listening address, temp dirs, logs) comes from the environment the container was
started with. It imports nothing from deploybench: it runs inside the container's environment.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    import psutil
    from sagemaker_huggingface_inference_toolkit import mms_model_server, serving
    from sagemaker_inference import model_server

    config = os.path.join(os.environ["DEPLOYBENCH_CONTAINER_DIR"], "mms.properties")
    model_server.MMS_CONFIG_FILE = config  # where _create_model_server_config_file writes
    mms_model_server.MMS_CONFIG_FILE = config  # what --mms-config passes to multi-model-server

    def own_server_process() -> psutil.Process:
        for process in psutil.process_iter():
            try:
                if process.status() == psutil.STATUS_ZOMBIE:
                    continue
                command = process.cmdline()
            except psutil.Error:
                continue
            if model_server.MMS_NAMESPACE in command and config in command:
                return process
        raise Exception("mms model server was unsuccessfully started")

    model_server._retrieve_mms_server_process = own_server_process
    print(
        f"deploybench local container: sagemaker-huggingface-inference-toolkit serving.main() on {sys.executable}",
        flush=True,
    )
    serving.main()


if __name__ == "__main__":
    main()
