# Business-question catalog: list, filters, detail, answer, errors, auth.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use JSON::PP ();

my $sb = Sandbox->start(keys => ['k1=standard', 'k2=premium'],
						args => ['--time-scale', '0.001', '--seed', '7']);

my @personas = qw(geschaeftsfuehrung einkauf kalkulation hr);
my %code = (geschaeftsfuehrung => 'GF', einkauf => 'EK', kalkulation => 'KA', hr => 'HR');
my @answerability = qw(available_snapshot available_limited_scope partial_evidence
	available_with_owner_prioritization source_required
	source_and_semantics_required source_and_owner_required);
my %connected = (available_snapshot => 1, available_limited_scope => 1);
my @envelope = qw(result count filters contract identity_rules
	performance_classes catalog_status_only data_notes);

sub get { my ($path, %o) = @_; return $sb->req('GET', $path, key => 'k1', %o) }

sub plain_error
{
	my ($r, $status, $code, $name) = @_;
	is($r->{status}, $status, "$name: status $status");
	is(eval { $r->{json}{error}{code} }, $code, "$name: code $code")
		if defined $code;
	ok(defined eval { $r->{json}{error}{message} }, "$name: message present");
}

# --- the whole list ---
my $r = get('/v1/business-questions');
is($r->{status}, 200, 'list: 200');
my $j = $r->{json};
ok(exists $j->{$_}, "list envelope has $_") for @envelope;
is(ref $j->{$_}, 'HASH', "$_ is an object")
	for qw(filters contract identity_rules performance_classes);
ok(JSON::PP::is_bool($j->{catalog_status_only}) && $j->{catalog_status_only},
   'catalog_status_only is true');
is(ref $j->{data_notes}, 'ARRAY', 'data_notes is an array');
ok(@{ $j->{data_notes} } > 0 && !grep({ ref $_ || !defined $_ } @{ $j->{data_notes} }),
   'data_notes are strings');
is(scalar @{ $j->{result} }, 50, 'exactly 50 questions');
is($j->{count}, 50, 'count 50');
is_deeply($j->{filters}, { persona => undef, answerability => undef },
		  'no filters echoed as null');

my (%seen_p, %seen_a, %ids);
my $all = $j->{result};
for my $q (@$all)
{
	$seen_p{ $q->{persona} }++;
	$seen_a{ $q->{answerability} }++;
	$ids{ $q->{id} }++;
	for my $f (qw(id persona question answerability answer_class product_key product_route))
	{
		unless (defined $q->{$f} && !ref $q->{$f} && length $q->{$f})
		{
			fail("question $q->{id} has string $f");
		}
	}
	like($q->{id}, qr/^BQ-$code{$q->{persona}}-\d{3}$/, "$q->{id} matches its persona")
		or diag explain $q;
}
is(scalar keys %ids, 50, 'ids are unique');
ok($seen_p{$_}, "persona $_ present") for @personas;
ok($seen_a{$_}, "answerability $_ present") for @answerability;
is(scalar keys %seen_p, 4, 'no other persona');
is(scalar keys %seen_a, 7, 'no other answerability');
ok($ids{'BQ-GF-001'} && $ids{'BQ-EK-001'} && $ids{'BQ-KA-001'} && $ids{'BQ-HR-001'},
   'numbering starts at 001 per persona');

# same answer twice (deterministic)
is_deeply(get('/v1/business-questions')->{json}, $j, 'list is deterministic');

# --- filters ---
for my $p (@personas)
{
	my $f = get("/v1/business-questions?persona=$p")->{json};
	my @want = grep { $_->{persona} eq $p } @$all;
	is($f->{count}, scalar @want, "persona=$p count");
	is_deeply($f->{result}, \@want, "persona=$p items");
	is_deeply($f->{filters}, { persona => $p, answerability => undef },
			  "persona=$p echoed");
}
for my $a (@answerability)
{
	my $f = get("/v1/business-questions?answerability=$a")->{json};
	my @want = grep { $_->{answerability} eq $a } @$all;
	ok(@want > 0, "some $a");
	is($f->{count}, scalar @want, "answerability=$a count");
	is_deeply($f->{result}, \@want, "answerability=$a items");
}
{
	my $f = get('/v1/business-questions?persona=hr&answerability=source_required')->{json};
	my @want = grep { $_->{persona} eq 'hr' && $_->{answerability} eq 'source_required' } @$all;
	is_deeply($f->{result}, \@want, 'both filters combine');
	is($f->{count}, scalar @want, 'combined count');
	is_deeply($f->{filters}, { persona => 'hr', answerability => 'source_required' },
			  'both filters echoed');
	ok(exists $f->{$_}, "filtered envelope has $_") for @envelope;
}
{
	# a valid combination that matches nothing is an empty list, not an error
	my %combo;
	$combo{"$_->{persona}|$_->{answerability}"} = 1 for @$all;
	my ($p, $a);
	OUTER: for my $pp (@personas) { for my $aa (@answerability) {
		unless ($combo{"$pp|$aa"}) { ($p, $a) = ($pp, $aa); last OUTER } } }
	if ($p)
	{
		my $e = get("/v1/business-questions?persona=$p&answerability=$a");
		is($e->{status}, 200, 'empty match: 200');
		is($e->{json}{count}, 0, 'empty match: count 0');
		is_deeply($e->{json}{result}, [], 'empty match: empty result');
	}
}

plain_error(get('/v1/business-questions?persona=ceo'), 400, 'invalid_persona', 'bad persona');
plain_error(get('/v1/business-questions?persona=HR'), 400, 'invalid_persona', 'persona is case-sensitive');
plain_error(get('/v1/business-questions?answerability=available'), 400,
			'invalid_answerability', 'bad answerability');
plain_error(get('/v1/business-questions?limit=5'), 400, undef, 'unknown parameter');
plain_error(get('/v1/business-questions?persona=hr&persona=einkauf'), 400, undef,
			'repeated parameter');

# --- auth ---
for my $path ('/v1/business-questions', '/v1/business-questions/BQ-GF-001',
			  '/v1/business-questions/BQ-GF-001/answer')
{
	my $n = $sb->req('GET', $path);
	is($n->{status}, 401, "no key on $path: 401");
	ok(defined eval { $n->{json}{error}{code} }, "no key on $path: plain error body");
	is($sb->req('GET', $path, key => 'nope')->{status}, 401, "bad key on $path: 401");
}

# --- detail ---
my %summary = map { $_->{id} => $_ } @$all;
for my $id ('BQ-GF-001', 'BQ-EK-013', 'BQ-KA-012', 'BQ-HR-009')
{
	my $d = get("/v1/business-questions/$id");
	is($d->{status}, 200, "detail $id: 200");
	my $dj = $d->{json};
	ok(exists $dj->{$_}, "detail $id has $_")
		for qw(result common_acceptance_criteria slow_answer_policy contract authorization);
	is(ref $dj->{result}, 'HASH', 'result is an object');
	is(ref $dj->{common_acceptance_criteria}, 'ARRAY', 'common_acceptance_criteria is an array');
	ok(@{ $dj->{common_acceptance_criteria} } > 0
	   && !grep({ ref $_ ne 'HASH' } @{ $dj->{common_acceptance_criteria} }),
	   'common_acceptance_criteria holds objects');
	is(ref $dj->{$_}, 'HASH', "$_ is an object")
		for qw(slow_answer_policy contract authorization);
	is($dj->{result}{$_}, $summary{$id}{$_}, "detail $id: $_ as in the list")
		for qw(id persona question answerability answer_class product_key product_route);
	ok(exists $dj->{result}{$_}, "detail $id: result has $_")
		for qw(status product_mapping specific_acceptance);
	is(!!$dj->{result}{status}{connected}, !!$connected{ $summary{$id}{answerability} },
	   "detail $id: connected flag");
	is($dj->{result}{product_mapping}{product_key}, $summary{$id}{product_key},
	   "detail $id: product mapping");
	is($dj->{authorization}{partner_tier}, 'standard', 'authorization shows the tier');
	unlike($d->{body}, qr/k1/, 'key not echoed');
}
is(get('/v1/business-questions/BQ-GF-001', key => 'k2')->{json}{authorization}{partner_tier},
   'premium', 'authorization follows the key');

for my $bad ('BQ-XX-001', 'bq-gf-001', 'BQ-GF-1', 'BQ-GF-0001', 'BQ-GF-00A', 'GF-001', 'BQ-GF')
{
	plain_error(get("/v1/business-questions/$bad"), 400, 'invalid_question_id', "detail $bad");
	plain_error(get("/v1/business-questions/$bad/answer"), 400, 'invalid_question_id', "answer $bad");
}
plain_error(get('/v1/business-questions/BQ-GF-099'), 404, 'question_not_found', 'unknown id');
plain_error(get('/v1/business-questions/BQ-HR-000/answer'), 404, 'question_not_found',
			'unknown id answer');
plain_error(get('/v1/business-questions/BQ-GF-001?x=1'), 400, undef, 'detail: query param');

# --- answers: every question ---
my ($nconn, $nblock) = (0, 0);
for my $q (@$all)
{
	my $a = get("/v1/business-questions/$q->{id}/answer");
	unless ($a->{status} == 200 && ref $a->{json} eq 'HASH')
	{
		fail("answer $q->{id}: 200 object");
		next;
	}
	my $aj = $a->{json};
	if ($connected{ $q->{answerability} })
	{
		$nconn++;
		ok($aj->{business_answer_included}
		   && JSON::PP::is_bool($aj->{business_answer_included}), "$q->{id}: included")
			or diag explain $aj;
		ok(!exists $aj->{blocker}, "$q->{id}: no blocker");
		ok(ref $aj->{figures} eq 'ARRAY' && @{ $aj->{figures} } > 0, "$q->{id}: figures");
		ok(!grep({ !defined $_->{value} || $_->{value} !~ /^-?[\d.]+(e[+-]?\d+)?$/i }
				 @{ $aj->{figures} }), "$q->{id}: numeric figures");
		ok($aj->{snapshot}{approved}, "$q->{id}: approved snapshot");
		is(!!$aj->{scope}{limited}, $q->{answerability} eq 'available_limited_scope',
		   "$q->{id}: scope.limited");
	}
	else
	{
		$nblock++;
		ok(JSON::PP::is_bool($aj->{business_answer_included})
		   && !$aj->{business_answer_included}, "$q->{id}: business_answer_included false");
		is(ref $aj->{blocker}, 'HASH', "$q->{id}: blocker object");
		ok(defined $aj->{blocker}{code} && length $aj->{blocker}{code}, "$q->{id}: blocker code");
		is($aj->{blocker}{answerability}, $q->{answerability}, "$q->{id}: blocker names it");
		ok(!exists $aj->{figures} && !exists $aj->{snapshot}, "$q->{id}: no figures");
		unlike($a->{body}, qr/"value"/, "$q->{id}: no values anywhere");
	}
	is($aj->{question_id}, $q->{id}, "$q->{id}: question_id");
}
ok($nconn > 0 && $nblock > 0, "both connected ($nconn) and blocked ($nblock) answers");

# figures are deterministic for a seed, and follow the seed
my $a1 = get('/v1/business-questions/BQ-GF-001/answer')->{body};
is(get('/v1/business-questions/BQ-GF-001/answer')->{body}, $a1, 'answer is deterministic');
my $sb2 = Sandbox->start(keys => ['k1'], args => ['--time-scale', '0.001', '--seed', '8']);
my $other = $sb2->req('GET', '/v1/business-questions/BQ-GF-001/answer', key => 'k1');
isnt($other->{body}, $a1, 'another seed gives other figures');
is_deeply($sb2->req('GET', '/v1/business-questions', key => 'k1')->{json}, $j,
		  'the catalog itself does not depend on the seed');
$sb2->stop;

$sb->stop;
done_testing();
