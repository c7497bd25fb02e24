#!/usr/bin/env python3
# Stand-in for systemd's notify socket: record every sd_notify datagram,
# one per line (newlines inside turned into '|'), until STOPPING=1 or a
# timeout.  With TIMESFILE, also each line prefixed by the wall clock time
# of its arrival (seconds, as "date +%s.%N" prints them).
# Usage: notify-listen.py SOCKET OUTFILE [TIMEOUT [TIMESFILE]]
import os
import socket
import sys
import time

path, out = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
times = open(sys.argv[4], "w") if len(sys.argv) > 4 else None
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(timeout)
with open(out, "w") as f:
    while True:
        try:
            msg = s.recv(4096).decode(errors="replace")
        except socket.timeout:
            break
        f.write(msg.replace("\n", "|") + "\n")
        f.flush()
        if times:
            times.write("%.6f %s\n" % (time.time(), msg.replace("\n", "|")))
            times.flush()
        if "STOPPING=1" in msg:
            break
