"""The human side: skeleton frames, smoothing, the body-centred frame and frame processing."""
