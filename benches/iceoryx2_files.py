"""Removes what an iceoryx2 domain leaves behind once its processes are gone."""

import os


def remove_domain(prefix):
    """Removes the files of the iceoryx2 domain `prefix` from /dev/shm and /tmp/iceoryx2
    (iceoryx2 keeps a node-management segment per domain after its last process exits)."""
    for root in ("/dev/shm", "/tmp/iceoryx2"):
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                if name.startswith(prefix):
                    try:
                        os.remove(os.path.join(dirpath, name))
                    except OSError:
                        pass
