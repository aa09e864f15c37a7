"""A live cluster file system on one machine (issue 18): its network first.

:mod:`simfs.testbed.network` builds the switch and the hosts' namespaces and shaped
links; the file-system daemons, the clients' mounts and ``simfs testbed`` come next."""
