#!/usr/bin/env python3
# Flip this process's comm between two names as fast as it can, for
# SECONDS: the hostile load of an unprivileged user (each flip is a
# proc connector event).  Prints how many flips it made.
# Usage: commflip.py NAME_A NAME_B SECONDS
import ctypes
import sys
import time

PR_SET_NAME = 15
libc = ctypes.CDLL(None)
a, b, secs = sys.argv[1].encode(), sys.argv[2].encode(), float(sys.argv[3])
end = time.monotonic() + secs
n = 0
while time.monotonic() < end:
    for _ in range(1000):
        libc.prctl(PR_SET_NAME, a, 0, 0, 0)
        libc.prctl(PR_SET_NAME, b, 0, 0, 0)
    n += 2000
print(n, "flips")
