"""``craft-env serve``: CRAFT played in the browser, any seat a person, a model or a built-in agent.

A thin shell over the runner (``docs/serve.md``): ``setup`` (what the
organiser chooses), ``seats`` (seat kinds and a person's input),
``frames`` (what each page is sent), ``team`` (the agents of a game, a
person's seat among them), ``session`` (one game played by the runner and
logged as a run directory), ``lobby`` (every game, tokens,
resume after a restart), ``http`` (a bounded HTTP server on asyncio
streams), ``app`` (the routes) and ``serve`` (the command). The server is
imported only by the ``serve`` command.
"""
