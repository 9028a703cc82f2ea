"""The `bakers-dozen` command line: the top layer, which nothing else imports.

`cli` holds the command group and how errors reach the user; each other module
holds a few verbs (`games`, `record`, `simulate`, `report`, `solve`) or what the
verbs share (`options`, `limits`).
"""
