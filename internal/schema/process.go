package schema

import "errors"

// Process prepares tool arguments for a handler: it coerces them (when
// lenient is set; see [Validator.Coerce]), inserts missing defaults (see
// [Validator.ApplyDefaults]) and validates the result (see
// [Validator.Validate]). It returns the document to hand on, or the error
// of the validation. Data comes back as it is, with no allocation, when it
// is valid and no default is missing: then Process costs one pass over the
// document, lenient or not, since coercion never changes a valid document.
func (v *Validator) Process(data []byte, lenient bool) ([]byte, error) {
	err := v.Validate(data)
	if err == nil {
		return v.withDefaults(data)
	}
	var se *SyntaxError
	if errors.As(err, &se) || errors.Is(err, ErrTooComplex) {
		return nil, err
	}
	out, changed := data, false
	if lenient {
		c, ok, cerr := v.Coerce(data)
		if cerr != nil {
			return nil, cerr
		}
		out, changed = c, ok
	}
	if v.hasDefaults {
		d, ok, derr := v.ApplyDefaults(out)
		if derr != nil {
			return nil, derr
		}
		if ok {
			out, changed = d, true
		}
	}
	if !changed {
		return nil, err
	}
	if err := v.Validate(out); err != nil {
		return nil, err
	}
	return out, nil
}

// withDefaults returns the valid document data with its missing defaults,
// validated again if there were any (a default need not be valid).
func (v *Validator) withDefaults(data []byte) ([]byte, error) {
	if !v.hasDefaults {
		return data, nil
	}
	out, changed, err := v.ApplyDefaults(data)
	if err != nil {
		return nil, err
	}
	if !changed {
		return data, nil
	}
	if err := v.Validate(out); err != nil {
		return nil, err
	}
	return out, nil
}
