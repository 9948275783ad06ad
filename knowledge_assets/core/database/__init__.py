"""The store itself: connections and migrations, the embedded PostgreSQL server and the processes
using it, and the one-writer-at-a-time lock."""
