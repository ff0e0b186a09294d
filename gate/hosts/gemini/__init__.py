"""Google's Gemini CLI: its hook events and verdicts (hook_io.py), its wiring (install.py, doctor.py)."""
