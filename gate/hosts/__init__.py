"""The agents gate serves, one package each: how an agent's hook events, verdicts and transcripts are spelled.

The gates do not know which agent they serve; a host module reads the agent's event into gate's terms and
writes the verdict back in that agent's exact schema. The hot path imports only the host it runs for.
"""
