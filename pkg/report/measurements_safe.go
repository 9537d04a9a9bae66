package report

// csvCell makes one cell of the --measurements CSV safe to open in a
// spreadsheet: a cell that starts with =, +, -, @, a tab or a carriage
// return would be read as a formula (a device or a sequence file could
// make a cell run =HYPERLINK(...) or worse), so it gets a leading single
// quote, which spreadsheets show as text. A plain decimal number, such as
// -3.5 or +1e-3, is left as it is so that it stays a number.
func csvCell(s string) string {
	if s == "" || !formulaStart(s[0]) || isDecimal(s) {
		return s
	}
	return "'" + s
}

func formulaStart(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// isDecimal reports whether s is a number written in decimals, with an
// optional sign and exponent: what a spreadsheet reads as a number, never
// as a formula.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}
