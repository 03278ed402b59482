package file

import (
	"errors"
	"os"
)

func newWebM(*os.File) (demuxer, error) { return nil, errors.New("WebM/Matroska is not supported yet") }
