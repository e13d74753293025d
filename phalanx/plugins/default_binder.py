"""DefaultBinder: binds the pod to the chosen node (upstream writes a Binding object; phalanx records the
decision). Upstream: plugins/defaultbinder/default_binder.go."""
from __future__ import annotations

from .framework import Plugin


class DefaultBinder(Plugin):
    name = "DefaultBinder"

    def bind(self, pod, node: str) -> str:
        return node
