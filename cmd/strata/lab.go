package main

import (
	"io"

	"github.com/strata-rtc/strata/internal/lab"
)

func labCommand(args []string, stdout, stderr io.Writer) int { return lab.Main(args, stdout, stderr) }
