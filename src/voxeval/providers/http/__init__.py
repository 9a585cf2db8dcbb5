"""The HTTP transport shared by remote providers and HTTP systems: pooled clients, retries, OpenAI-
compatible endpoints.
"""
