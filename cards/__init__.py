"""cards: dataset cards and versioned Hub releases of run folders."""
