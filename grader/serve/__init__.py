"""`abgrade serve`: a per-user grader that has already imported everything a grade needs
and forks one child per request (issue 26, goal 1; DESIGN.md, "The warm grader").

One module per job: `address` (where the socket lives and whether that folder is ours),
`wire` (the messages and the file descriptors they carry), `client` (what `abgrade`
tries first, with almost nothing imported), `context` (the client's installation,
environment and process against the server's), `staleness` (whether the grader's code
changed since the server imported it), `preload` (what the server imports once),
`handover` (the request's child: it becomes the client's grade), `zygotes` (a root
server's worker zygotes, which served `.py` grades fork their students from) and
`server` (the loop).
This file imports nothing: the client imports its modules before anything else."""
