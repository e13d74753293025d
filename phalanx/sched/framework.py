"""A profile's plugins, instantiated once, listed per extension point in the profile's order (upstream:
pkg/scheduler/framework/runtime). The cycles ask the Framework for the plugins of an extension point and call
them; nothing outside a plugin's module knows what a plugin does."""
from __future__ import annotations

import dataclasses

from ..plugins import REGISTRY, Plugin, ProfileContext


class Framework:
    def __init__(self, profile):
        self.profile = profile
        self.context = context = ProfileContext(profile.compat, profile.feature_gates)
        args = dict(profile.args)
        names = dict.fromkeys(n for _, enabled in profile.plugins for n in enabled)
        self.plugins: dict[str, Plugin] = {n: REGISTRY[n](args.get(n), context) for n in names}
        self._points = {point: tuple(self.plugins[n] for n in enabled) for point, enabled in profile.plugins}
        self.weights: dict[str, int] = dict(profile.weights)
        self.placement_weights: dict[str, int] = dict(profile.placement_weights)
        self._signers = tuple(p for p in self.plugins.values() if type(p).signature is not Plugin.signature)
        self.warners = tuple(p for p in self.plugins.values() if type(p).warnings is not Plugin.warnings)
        self._run_keyers = tuple(p for p in self.plugins.values() if type(p).run_key is not Plugin.run_key)
        self._tokeners = tuple(p for p in self.plugins.values()
                               if type(p).prepare_token is not Plugin.prepare_token)
        # Pods with one PodSpec object and one PodGroup get one PreEnqueue answer when no plugin reads more.
        self.shared_pre_enqueue = all(p.pre_enqueue_reads != "pod" for p in self.at("preEnqueue"))
        # Whether a failed cycle needs node statuses and a dry run for PostFilter (asked once per preemptor).
        self.post_filter_reads_nodes = any(p.post_filter_reads_nodes for p in self.at("postFilter"))

    def at(self, point: str) -> tuple[Plugin, ...]:
        """The plugins enabled at an extension point (its configuration name, e.g. "filter"), in order."""
        return self._points.get(point, ())

    def plugin(self, name: str) -> Plugin:
        return self.plugins[name]

    def signature(self, pod) -> dict:
        """What the profile's plugins read of the pod beyond its spec (see Plugin.signature)."""
        spec = pod.spec
        out = {}
        for plugin in self._signers:
            if not plugin.signs(spec):
                continue
            part = plugin.signature(pod)
            if part is not None:
                out[plugin.name] = part
        return out

    def signs_by_template(self, spec) -> bool:
        """Whether every plugin that may sign pods with this PodSpec reads only their spec, labels, annotations and
        namespace (then pods copied from one template into one namespace share a shape found by template)."""
        return all(type(p).signs_from_template or not p.signs(spec) for p in self._signers)

    def prepare_tokens(self, cluster, live=frozenset()) -> tuple:
        """Every plugin's prepare_tokens now: kept shapes are prepared again when one changes. live: plugins whose
        PreScore runs afresh in every cycle anyway (their preScore token does not matter)."""
        return tuple((plugin.prepare_token(cluster, "preFilter"),
                      None if plugin in live else plugin.prepare_token(cluster, "preScore"))
                     for plugin in self._tokeners)

    def split_run(self, shape, pods: list, cluster) -> list[tuple[object, list]]:
        """Consecutive parts of a run of one shape that the plugins still tell apart now (Plugin.run_key), each
        with a shape whose representative pod is the part's first pod when it differs from the shape's."""
        keyers = [plugin for plugin in self._run_keyers if plugin.splits_runs(cluster)]
        if not keyers:
            return [(shape, pods)]
        keys = [self._run_key(pod, cluster, keyers) for pod in pods]
        # A part whose key is the shape's own pod's keeps the shape; the others get their first pod as its
        # representative (a run of pods without a key still needs one when the shape's pod has a key).
        own = self._run_key(shape.pod, cluster, keyers)
        if all(k == own for k in keys):
            return [(shape, pods)]
        parts: list[tuple[object, list]] = []
        for pod, key in zip(pods, keys):
            if parts and parts[-1][0] == key:
                parts[-1][1].append(pod)
            else:
                parts.append((key, [pod]))
        return [(shape if key == own else dataclasses.replace(shape, pod=part[0]), part) for key, part in parts]

    @staticmethod
    def _run_key(pod, cluster, keyers):
        keys = tuple(plugin.run_key(pod, cluster) for plugin in keyers)
        return None if all(k is None for k in keys) else keys

    def __reduce__(self):
        return (Framework, (self.profile,))
