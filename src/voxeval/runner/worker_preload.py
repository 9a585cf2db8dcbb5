"""What the fork server of ``executor: processes`` imports once, before it forks any worker:
the worker's code and every built-in component (and plugin), so a worker starts with them in
memory instead of importing them on its first units. Imported for that side effect only."""

from voxeval import registry
from voxeval.runner import process_worker  # noqa: F401  (imported to be inherited)

registry.load_all()
