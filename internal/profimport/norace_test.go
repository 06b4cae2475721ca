//go:build !race

package profimport

const raceEnabled = false
