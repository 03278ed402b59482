package media

// AudioLevel reads the client-to-mixer audio level extension (RFC 6464): the level in -dBov (0 is
// the loudest, 127 silence) and the voice activity bit. ok is false for a malformed element.
func AudioLevel(ext []byte) (level uint8, voice bool, ok bool) {
	if len(ext) < 1 {
		return 127, false, false
	}
	return ext[0] & 0x7f, ext[0]&0x80 != 0, true
}
