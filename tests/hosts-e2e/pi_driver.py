"""Drives one pi session in RPC mode (`pi --mode rpc ...`): sends the prompt given after `--`,
echoes pi's events to stdout, and closes pi's stdin once the session has been idle (as many
`agent_end` as `agent_start`) for QUIET seconds, so that a continuation fable's Stop gate sends
after an `agent_end` still runs. Exits with pi's status."""

import json
import subprocess
import sys
import threading
import time

QUIET = 3.0


def main():
    args = sys.argv[1:]
    cut = args.index("--")
    argv, prompt = args[:cut], " ".join(args[cut + 1:])
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    state = {"start": 0, "end": 0, "t": time.time()}
    lock = threading.Lock()

    def read():
        for line in p.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            try:
                kind = json.loads(line).get("type")
            except ValueError:
                continue
            with lock:
                if kind == "agent_start":
                    state["start"] += 1
                elif kind == "agent_end":
                    state["end"] += 1
                state["t"] = time.time()

    t = threading.Thread(target=read, daemon=True)
    t.start()
    p.stdin.write(json.dumps({"type": "prompt", "message": prompt}) + "\n")
    p.stdin.flush()
    while p.poll() is None:
        time.sleep(0.2)
        with lock:
            idle = state["start"] > 0 and state["start"] == state["end"]
            quiet = time.time() - state["t"] >= QUIET
        if idle and quiet:
            p.stdin.close()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
            break
    t.join(timeout=2)
    sys.exit(p.wait())


if __name__ == "__main__":
    main()
