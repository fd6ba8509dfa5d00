"""The jupyter_server extension: configuration, REST handlers, the kernel clients and the analysis
service that runs the payload in the kernel, the checks and the model for one cell."""
