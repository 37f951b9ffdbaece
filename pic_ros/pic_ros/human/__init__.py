"""The human side: smoothing, the body-centred frame, frame processing and the front end."""
