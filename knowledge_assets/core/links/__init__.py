"""Links between notes: which note a link leads to (:mod:`.resolve`), and the notes that link to
a note (:mod:`.backlinks`), for the note view, the command line and the MCP server alike."""
