"""Accounting for model calls: usage meter and ledger, per-provider rate limits, per-context
collector stacks.
"""
