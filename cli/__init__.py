"""gradview's command line (the ``gradview`` console script)."""
