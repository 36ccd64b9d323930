"""Tools the agent can call. Names carry a group prefix (file_, shell_, web_, plan_, …)."""
