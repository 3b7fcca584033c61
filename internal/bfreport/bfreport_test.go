package bfreport

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

var buildDir = filepath.Join("..", "..", "p4src", "build", "tna")

// The committed RESOURCES.md is what bfreport makes of the committed
// resources.json: nothing in it is edited by hand.
func TestCommittedReportMatchesCompilerOutput(t *testing.T) {
	r, err := Load(buildDir)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("skip: no resources.json in %s (run make p4-tna with p4c-barefoot on PATH)", buildDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := r.Write(&got); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(buildDir, "RESOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("RESOURCES.md differs from bfreport's rendering of resources.json: run make p4-tna")
	}
	if r.StagesAvailable != 12 || r.StagesUsed() == 0 {
		t.Errorf("stages: %d used of %d", r.StagesUsed(), r.StagesAvailable)
	}
}

// A placement past the last stage does not fit, one within it does.
func TestFits(t *testing.T) {
	r := &Report{StagesAvailable: 12, Stages: []Stage{{Number: 11, Tables: []string{"t"}}}}
	if !r.Fits() || r.StagesUsed() != 12 {
		t.Errorf("12 stages of 12: fits %v, used %d", r.Fits(), r.StagesUsed())
	}
	r.Stages = append(r.Stages, Stage{Number: 12, Tables: []string{"u"}})
	if r.Fits() {
		t.Error("13 stages of 12 fit")
	}
}
