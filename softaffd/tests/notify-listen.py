#!/usr/bin/env python3
# Stand-in for systemd's notify socket: record every sd_notify datagram,
# one per line (newlines inside turned into '|'), until STOPPING=1 or a
# timeout.  Usage: notify-listen.py SOCKET OUTFILE [TIMEOUT]
import os
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
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
        if "STOPPING=1" in msg:
            break
