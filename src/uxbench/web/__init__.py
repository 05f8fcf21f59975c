"""`uxbench view`: a local web app over run directories and mining outputs (the `web` extra: FastAPI, Jinja2,
markdown-it-py, nh3). Every script and style is served from this package; nothing is fetched from a CDN.

- `catalog.py`: the run and mining directories named on the command line, addressed by id (never by a path
  taken from a request);
- `sample_index.py`: a per-run SQLite index of the samples, built in the background; `sample_query.py`: its
  filters, searches, sorts over the whole run, pages, neighbours and snippets;
- `render.py`: conversation text -> safe HTML (user text verbatim, assistant text as sanitised Markdown);
- `security.py`: CSRF tokens, the checks every POST goes through, and the Host check of every request;
- `app.py`: the app factory; `pages/`: the routes, one module per page; `serve.py`: binding and starting;
- `site.py`: the static leaderboard site (`uxbench site build`); `public.py`: nothing of the local file system
  in it.
"""
