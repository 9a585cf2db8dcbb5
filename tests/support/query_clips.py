"""How long the synthetic query clips of the run fixtures last.

A single-turn run's report checks its input: it rates every query's audio with DNSMOS, which
(as the reference ``dnsmos_local.py``) repeats a clip shorter than its 9.01 s window until it
fills it and then scores every 1 s hop. A 1.0 s clip becomes 16 s, seven windows of the same
tone; a 1.2 s clip becomes 9.6 s, one window. Nothing the tests assert depends on the length.
"""

QUERY_SECONDS = 1.2
