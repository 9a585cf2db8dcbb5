"""Benchmark items, built-in suites, loaders and builders."""

from voxeval.benchmarks.suite_info import SuiteInfo, list_suites, resolve_suite

__all__ = ["SuiteInfo", "list_suites", "resolve_suite"]
