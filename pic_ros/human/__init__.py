"""The human side: skeleton frames, tracker formats, smoothing and the body-centred frame."""
