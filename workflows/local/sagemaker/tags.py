"""AddTags, ListTags, DeleteTags on any resource of the local SageMaker, by ARN."""

from __future__ import annotations

from typing import Any

from workflows.local.sagemaker.api import validation
from workflows.local.sagemaker.state import BackendState


class TagsApi(BackendState):
    def _tags_of(self, arn: str) -> list[dict[str, str]]:
        tags = self.tags.get(arn)
        if tags is None:
            raise validation(f"Resource {arn} does not exist.")
        return tags

    def add_tags(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            tags = self._tags_of(str(body.get("ResourceArn")))
            new = list(body.get("Tags") or [])
            keys = {t["Key"] for t in new}
            tags[:] = [t for t in tags if t["Key"] not in keys] + new
        return {"Tags": new}

    def list_tags(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            return {"Tags": list(self._tags_of(str(body.get("ResourceArn"))))}

    def delete_tags(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            tags = self._tags_of(str(body.get("ResourceArn")))
            keys = set(body.get("TagKeys") or [])
            tags[:] = [t for t in tags if t["Key"] not in keys]
        return {}
