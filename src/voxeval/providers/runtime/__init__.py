"""Running local models in this process: packaged weight files, ONNX sessions, freeing heap memory,
thread dispatch from asyncio.
"""
