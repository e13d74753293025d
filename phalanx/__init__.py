"""phalanx: exact, vectorised Kubernetes scheduling (kube-scheduler v1.36 semantics)."""
__version__ = "0.1.0"
